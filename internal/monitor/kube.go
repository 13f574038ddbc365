package monitor

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/nodepool"
	"github.com/pullpath/pullpath/internal/redact"
)

// In-cluster service account files, as client-go's rest.InClusterConfig reads them.
const (
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	tokenFile         = serviceAccountDir + "/token"
	rootCAFile        = serviceAccountDir + "/ca.crt"
)

// NodeClient is the agent's REST client for its own Node: get it (labels),
// patch its status conditions, and post events about it. It speaks JSON
// only, with no Kubernetes types linked, and re-reads its token file on each
// request, as bound service-account tokens rotate.
type NodeClient struct {
	Server    string // https://host:port
	TokenFile string
	Node      string
	HTTP      *http.Client
}

// InClusterNodeClient builds the client from the pod's service account, as
// rest.InClusterConfig does.
func InClusterNodeClient(node string) (*NodeClient, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
	}
	return NewNodeClient("https://"+net.JoinHostPort(host, port), tokenFile, rootCAFile, node)
}

// NewNodeClient builds a client for server that trusts caFile and sends the
// bearer token read from tokenFile.
func NewNodeClient(server, tokenFile, caFile, node string) (*NodeClient, error) {
	if node == "" {
		return nil, errors.New("the node name is empty: set NODE_NAME from spec.nodeName (the downward API)")
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("reading the API server CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the API server CA %s holds no PEM certificate", caFile)
	}
	if _, err := os.Stat(tokenFile); err != nil {
		return nil, fmt.Errorf("the service account token: %w", err)
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		Proxy:               nil, // the API server is reached directly, as the kubelet's own client is
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
	}
	return &NodeClient{Server: strings.TrimRight(server, "/"), TokenFile: tokenFile, Node: node,
		HTTP: &http.Client{Transport: tr, Timeout: 15 * time.Second}}, nil
}

// Node is the part of a Node the agent reads.
type Node struct {
	Metadata struct {
		Name   string            `json:"name"`
		UID    string            `json:"uid"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Status struct {
		Conditions []Condition `json:"conditions"`
		NodeInfo   struct {
			OperatingSystem string `json:"operatingSystem"`
			Architecture    string `json:"architecture"`
		} `json:"nodeInfo"`
	} `json:"status"`
}

// Condition is a node condition, in the API's JSON shape.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"` // True, False, Unknown
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	LastHeartbeatTime  string `json:"lastHeartbeatTime,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// Get reads the agent's node.
func (c *NodeClient) Get(ctx context.Context) (*Node, error) {
	var n Node
	if err := c.do(ctx, http.MethodGet, "/api/v1/nodes/"+url.PathEscape(c.Node), "", nil, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// Pool returns the node's pool, named by its labels as internal/cluster
// names it.
func (n *Node) Pool() string {
	name, _ := nodepool.FromLabels(n.Metadata.Labels, n.Status.NodeInfo.OperatingSystem, n.Status.NodeInfo.Architecture)
	return name
}

// SetCondition sets one condition of the node's status with a strategic
// merge patch, which merges conditions by type and leaves the kubelet's own
// conditions alone.
func (c *NodeClient) SetCondition(ctx context.Context, cond Condition) error {
	patch := map[string]any{"status": map[string]any{"conditions": []Condition{cond}}}
	return c.do(ctx, http.MethodPatch, "/api/v1/nodes/"+url.PathEscape(c.Node)+"/status", "application/strategic-merge-patch+json", patch, nil)
}

// Event is what the agent says about its node on a transition.
type Event struct {
	Type    string // Normal or Warning
	Reason  string
	Message string
}

// PostEvent records an event about the node in namespace "default", where
// the kubelet records node events too.
func (c *NodeClient) PostEvent(ctx context.Context, uid string, e Event) error {
	now := time.Now().UTC().Format(time.RFC3339)
	body := map[string]any{
		"apiVersion":     "v1",
		"kind":           "Event",
		"metadata":       map[string]any{"generateName": c.Node + ".pullpath-", "namespace": "default"},
		"involvedObject": map[string]any{"kind": "Node", "name": c.Node, "uid": uid, "apiVersion": "v1"},
		"reason":         e.Reason,
		"message":        e.Message,
		"type":           e.Type,
		"source":         map[string]any{"component": "pullpath-monitor", "host": c.Node},
		"firstTimestamp": now,
		"lastTimestamp":  now,
		"count":          1,
	}
	return c.do(ctx, http.MethodPost, "/api/v1/namespaces/default/events", "application/json", body, nil)
}

// maxResponse bounds what the client reads of an API server response.
const maxResponse = 4 << 20

func (c *NodeClient) do(ctx context.Context, method, path, contentType string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Server+path, rd)
	if err != nil {
		return err
	}
	tok, err := os.ReadFile(c.TokenFile)
	if err != nil {
		return fmt.Errorf("reading the service account token: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "pullpath-monitor")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, redact.Error(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("%s %s: reading the response: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(data, &st)
		if st.Message == "" {
			st.Message = http.StatusText(resp.StatusCode)
		}
		return &APIError{Code: resp.StatusCode, Err: fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, redact.String(st.Message))}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decoding the response: %w", method, path, err)
		}
	}
	return nil
}

// APIError is an API server answer other than 2xx.
type APIError struct {
	Code int
	Err  error
}

func (e *APIError) Error() string { return e.Err.Error() }

// apiStatus is the HTTP status of an API server error, 0 when it is none.
func apiStatus(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return 0
}
