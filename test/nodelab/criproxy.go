package nodelab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// pullImageMethod is the CRI call whose requests CRIProxy records.
const pullImageMethod = "/runtime.v1.ImageService/PullImage"

// criMaxMsg is the kubelet's limit for CRI messages (16 MiB,
// pkg/kubelet/cri/remote maxMsgSize), on both legs of the proxy.
const criMaxMsg = 16 << 20

// PullRecord is what CRIProxy notes of one PullImage request: the image,
// the AuthConfig's server_address and which secret fields were set, never
// their values.
type PullRecord struct {
	Image string
	// Auth tells whether the request carried an AuthConfig at all.
	Auth bool
	// ServerAddress is auth.server_address as sent (not a secret).
	ServerAddress string
	// The secret fields of the AuthConfig: set or not.
	Username, Password, AuthField, IdentityToken, RegistryToken bool
}

// CRIProxy sits between a kubelet and its runtime's CRI socket: a gRPC
// server whose only handler is grpc.UnknownServiceHandler with a codec that
// keeps messages as bytes, so every call, unary or streaming, goes to the
// runtime unchanged (metadata, messages, status, header and trailer). It
// decodes the requests of runtime.v1.ImageService/PullImage only, to record
// them (PullRecord).
type CRIProxy struct {
	// Upstream is the runtime's socket; it is dialled at the first call.
	Upstream string

	mu      sync.Mutex
	pulls   []PullRecord
	methods map[string]int
	bad     []string // requests that did not decode
	conn    *grpc.ClientConn
	srv     *grpc.Server
	ln      net.Listener
}

// frame is one gRPC message as bytes.
type frame struct{ b []byte }

// rawCodec passes messages through as bytes. Its name is "proto": the
// content-subtype both ends expect of a CRI call.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("criproxy: cannot marshal %T", v)
	}
	return f.b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("criproxy: cannot unmarshal into %T", v)
	}
	f.b = append(f.b[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// Serve listens on the unix socket path and forwards every call to
// Upstream until Close.
func (p *CRIProxy) Serve(path string) error {
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ln = ln
	p.methods = map[string]int{}
	p.srv = grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(p.handle),
		grpc.MaxRecvMsgSize(criMaxMsg), grpc.MaxSendMsgSize(criMaxMsg))
	srv := p.srv
	p.mu.Unlock()
	go srv.Serve(ln)
	return nil
}

// Close stops the server and closes the upstream connection.
func (p *CRIProxy) Close() {
	p.mu.Lock()
	srv, conn := p.srv, p.conn
	p.mu.Unlock()
	if srv != nil {
		srv.Stop()
	}
	if conn != nil {
		conn.Close()
	}
}

// Pulls returns the PullImage requests recorded so far, in order.
func (p *CRIProxy) Pulls() []PullRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]PullRecord(nil), p.pulls...)
}

// Methods returns how many calls of each method went through.
func (p *CRIProxy) Methods() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.methods))
	for k, v := range p.methods {
		out[k] = v
	}
	return out
}

// Undecoded lists PullImage requests that did not decode.
func (p *CRIProxy) Undecoded() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bad...)
}

func (p *CRIProxy) upstream() (*grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		return p.conn, nil
	}
	conn, err := grpc.NewClient("unix://"+p.Upstream, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{}), grpc.MaxCallRecvMsgSize(criMaxMsg), grpc.MaxCallSendMsgSize(criMaxMsg)))
	if err != nil {
		return nil, err
	}
	p.conn = conn
	return conn, nil
}

// record notes a PullImage request, never a secret of it.
func (p *CRIProxy) record(b []byte) {
	var req runtimeapi.PullImageRequest
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := proto.Unmarshal(b, &req); err != nil {
		p.bad = append(p.bad, err.Error())
		return
	}
	r := PullRecord{Image: req.GetImage().GetImage()}
	if a := req.GetAuth(); a != nil {
		r.Auth = true
		r.ServerAddress = a.GetServerAddress()
		r.Username, r.Password, r.AuthField = a.GetUsername() != "", a.GetPassword() != "", a.GetAuth() != ""
		r.IdentityToken, r.RegistryToken = a.GetIdentityToken() != "", a.GetRegistryToken() != ""
	}
	p.pulls = append(p.pulls, r)
}

// handle forwards one call of any kind: the client's messages upstream as
// they come (then CloseSend), the runtime's header, messages, trailer and
// final status back.
func (p *CRIProxy) handle(_ any, ss grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(codes.Internal, "criproxy: no method")
	}
	p.mu.Lock()
	p.methods[method]++
	p.mu.Unlock()
	conn, err := p.upstream()
	if err != nil {
		return status.Errorf(codes.Unavailable, "criproxy: %v", err)
	}
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	md, _ := metadata.FromIncomingContext(ss.Context())
	out := metadata.MD{}
	for k, v := range md {
		// What gRPC sets itself on the outgoing leg.
		if strings.HasPrefix(k, ":") || k == "content-type" || k == "user-agent" || strings.HasPrefix(k, "grpc-") {
			continue
		}
		out[k] = v
	}
	cs, err := conn.NewStream(metadata.NewOutgoingContext(ctx, out), &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		return err
	}
	upErr := make(chan error, 1)
	go func() {
		for {
			f := &frame{}
			if err := ss.RecvMsg(f); err != nil {
				if errors.Is(err, io.EOF) {
					upErr <- cs.CloseSend()
					return
				}
				upErr <- err
				cancel()
				return
			}
			if method == pullImageMethod {
				p.record(f.b)
			}
			if err := cs.SendMsg(f); err != nil {
				// The runtime's status comes with RecvMsg below.
				upErr <- nil
				return
			}
		}
	}()
	if hdr, err := cs.Header(); err == nil && len(hdr) > 0 {
		if err := ss.SendHeader(hdr); err != nil {
			return err
		}
	}
	for {
		f := &frame{}
		err := cs.RecvMsg(f)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			ss.SetTrailer(cs.Trailer())
			return err
		}
		if err := ss.SendMsg(f); err != nil {
			return err
		}
	}
	ss.SetTrailer(cs.Trailer())
	return nil
}
