// Command credprovider is a kubelet image credential provider for tests: it
// speaks the real protocol (a CredentialProviderRequest on stdin, a
// CredentialProviderResponse on stdout) and misbehaves on demand.
//
// Its first argument is the mode: good (answer with PP_KEY -> PP_USER /
// PP_PASS, or the content of the file PP_PASS_FILE names), fail (exit 1
// after writing a message with a token to stderr), sleep (never answer),
// version (answer in another apiVersion), echo (answer with the request's
// serviceAccountToken as the password, as a registry that takes Kubernetes
// tokens would). With
// PP_REQUEST_LOG set it appends the request and its arguments to that file;
// with PP_KEY2 set the answer has a second auth entry, PP_KEY2 -> PP_USER /
// PP_PASS2 (one provider giving the kubelet several credentials).
// PP_CACHE_DURATION and PP_CACHE_KEY_TYPE set the answer's cacheDuration
// (default 5m) and cacheKeyType (default Registry).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

func main() {
	mode := "good"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reading stdin:", err)
		os.Exit(1)
	}
	var req struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Image      string `json:"image"`
		Token      string `json:"serviceAccountToken"`
	}
	if err := json.Unmarshal(in, &req); err != nil || req.Kind != "CredentialProviderRequest" {
		fmt.Fprintf(os.Stderr, "not a CredentialProviderRequest: %v\n", err)
		os.Exit(1)
	}
	if log := os.Getenv("PP_REQUEST_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, "args=%s env=%s request=%s\n", strings.Join(os.Args[1:], ","), os.Getenv("PP_CONFIG_ENV"), strings.TrimSpace(string(in)))
			f.Close()
		}
	}
	switch mode {
	case "fail":
		fmt.Fprintf(os.Stderr, "getting a token from the identity endpoint: 400 Bad Request: access_token=%s refused\n", os.Getenv("PP_PASS"))
		os.Exit(1)
	case "sleep":
		time.Sleep(time.Hour)
	case "version":
		req.APIVersion = "credentialprovider.kubelet.k8s.io/v1alpha1"
	}
	pass := os.Getenv("PP_PASS")
	if mode == "echo" {
		pass = req.Token
	}
	if f := os.Getenv("PP_PASS_FILE"); f != "" {
		// A node path, as AKS's provider reads /etc/kubernetes/azure.json.
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reading the identity file:", err)
			os.Exit(1)
		}
		pass = strings.TrimSpace(string(b))
	}
	auth := map[string]any{
		os.Getenv("PP_KEY"): map[string]string{"username": os.Getenv("PP_USER"), "password": pass},
	}
	if k := os.Getenv("PP_KEY2"); k != "" {
		auth[k] = map[string]string{"username": os.Getenv("PP_USER"), "password": os.Getenv("PP_PASS2")}
	}
	cacheDuration, cacheKeyType := "5m", "Registry"
	if d := os.Getenv("PP_CACHE_DURATION"); d != "" {
		cacheDuration = d
	}
	if k := os.Getenv("PP_CACHE_KEY_TYPE"); k != "" {
		cacheKeyType = k
	}
	resp := map[string]any{
		"apiVersion":    req.APIVersion,
		"kind":          "CredentialProviderResponse",
		"cacheKeyType":  cacheKeyType,
		"cacheDuration": cacheDuration,
		"auth":          auth,
	}
	json.NewEncoder(os.Stdout).Encode(resp)
}
