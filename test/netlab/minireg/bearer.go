package minireg

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Bearer is a registry handler behind token authentication, as Docker Hub
// serves a public repository: every request needs the bearer token that
// its realm (/token on the same server) hands out to anyone. It logs, for
// each request, the values of the header Mark, by kind ("token" for the
// realm, "registry" for the rest): the ground truth of which configured
// headers a runtime sends to which request.
type Bearer struct {
	// Inner serves the requests Bearer lets through.
	Inner http.Handler
	// Host is the server's name (host[:port]), for the realm's URL.
	Host string
	// Mark is the header whose values are logged.
	Mark string

	mu   sync.Mutex
	seen map[string][]string
}

// bearerToken is the one token the realm issues.
const bearerToken = "minireg-token"

func (b *Bearer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind := "registry"
	if r.URL.Path == "/token" {
		kind = "token"
	}
	b.mu.Lock()
	if b.seen == nil {
		b.seen = map[string][]string{}
	}
	if v := strings.Join(r.Header.Values(b.Mark), ","); !slices.Contains(b.seen[kind], v) {
		b.seen[kind] = append(b.seen[kind], v)
	}
	b.mu.Unlock()
	if kind == "token" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"token": bearerToken, "access_token": bearerToken, "expires_in": 300})
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+bearerToken {
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://`+b.Host+`/token",service="`+b.Host+`"`)
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
		return
	}
	b.Inner.ServeHTTP(w, r)
}

// Take returns, by kind, the distinct values of Mark the requests since
// the last Take carried (comma-joined per request, "" for a request
// without it), sorted, and clears the log.
func (b *Bearer) Take() map[string][]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.seen
	b.seen = nil
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}
