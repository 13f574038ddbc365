package minireg

import (
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Gate is a registry handler behind Basic authentication with its own
// users, logging the user of every request that presents one: the
// credential labs' registries, which say which user each runtime
// presented to which host. It logs users only, never passwords.
type Gate struct {
	// Inner serves the requests Gate lets through.
	Inner http.Handler
	// Users maps a user to its password; Realm names the challenge.
	Users map[string]string
	Realm string
	// Quiet is a user that is not logged (the lab's own pusher).
	Quiet string

	mu     sync.Mutex
	logged []string
	marked []string
}

func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u, p, ok := r.BasicAuth()
	// containers/image answers a Basic challenge with an empty user and
	// password when it has no credential: that is anonymous.
	if ok && u != g.Quiet && (u != "" || p != "") {
		g.mu.Lock()
		if !slices.Contains(g.logged, u) {
			g.logged = append(g.logged, u)
		}
		m := u
		if !g.Accepts(u, p) {
			m += "(rejected)"
		}
		if !slices.Contains(g.marked, m) {
			g.marked = append(g.marked, m)
		}
		g.mu.Unlock()
	}
	if !ok || g.Users[u] == "" || g.Users[u] != p {
		w.Header().Set("WWW-Authenticate", `Basic realm="`+g.Realm+`"`)
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
		return
	}
	g.Inner.ServeHTTP(w, r)
}

// Take returns the users logged since the last Take, comma-separated in
// the order first seen ("anonymous" when none), and clears the log.
func (g *Gate) Take() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.logged) == 0 {
		return "anonymous"
	}
	out := strings.Join(g.logged, ",")
	g.logged, g.marked = nil, nil
	return out
}

// TakeMarked is Take with each user marked "(rejected)" when its password
// was wrong (user(rejected),user: a refused attempt, then an accepted one).
func (g *Gate) TakeMarked() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := strings.Join(g.marked, ",")
	if len(g.marked) == 0 {
		out = "anonymous"
	}
	g.logged, g.marked = nil, nil
	return out
}

// Accepts reports whether user and password are one of the gate's users.
func (g *Gate) Accepts(user, password string) bool {
	return g.Users[user] != "" && g.Users[user] == password
}
