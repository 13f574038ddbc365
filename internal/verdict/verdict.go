package verdict

import (
	"errors"
	"fmt"
	"strings"
)

// Layer is the step of the pull path that failed, in pull order.
type Layer string

// The layers, in pull order (docs/contract.md).
const (
	LayerNone     Layer = "none"
	LayerConfig   Layer = "config"
	LayerDNS      Layer = "dns"
	LayerRoute    Layer = "route"
	LayerTLS      Layer = "tls"
	LayerAuth     Layer = "auth"
	LayerAuthz    Layer = "authz"
	LayerManifest Layer = "manifest"
	LayerTransfer Layer = "transfer"
	LayerRegistry Layer = "registry"
	LayerRuntime  Layer = "runtime"
	LayerUnknown  Layer = "unknown"
)

// Layers lists every failing layer in pull order.
var Layers = []Layer{LayerConfig, LayerDNS, LayerRoute, LayerTLS, LayerAuth, LayerAuthz,
	LayerManifest, LayerTransfer, LayerRegistry, LayerRuntime, LayerUnknown}

// Rank is the position of l along the pull path: a larger rank is further
// along. The registry layer (429/5xx) ranks after transfer because a registry
// can refuse service at any request; runtime failures happen after every byte
// arrived. Unknown and none rank lowest so that any named failure wins.
func (l Layer) Rank() int {
	switch l {
	case LayerConfig:
		return 1
	case LayerDNS:
		return 2
	case LayerRoute:
		return 3
	case LayerTLS:
		return 4
	case LayerAuth:
		return 5
	case LayerAuthz:
		return 6
	case LayerManifest:
		return 7
	case LayerTransfer:
		return 8
	case LayerRegistry:
		return 9
	case LayerRuntime:
		return 10
	}
	return 0
}

// Valid reports whether l is one of the contract's layers.
func (l Layer) Valid() bool { return l == LayerNone || l == LayerUnknown || l.Rank() > 0 }

// Role is which endpoint of the pull failed.
type Role string

// The roles of the endpoints a pull touches.
const (
	RoleNone     Role = ""
	RoleRegistry Role = "registry"
	RoleAuth     Role = "auth"
	RoleBlob     Role = "blob"
	RoleMirror   Role = "mirror"
	// RoleProxy is the HTTP(S) proxy of the runtime's environment, an
	// addition to the contract's roles: the hop every proxied host is
	// reached through.
	RoleProxy Role = "proxy"
)

// Owner is who fixes a failure.
type Owner string

// The owners.
const (
	OwnerNone     Owner = ""
	OwnerNetwork  Owner = "network"
	OwnerDNS      Owner = "dns"
	OwnerPKI      Owner = "pki"
	OwnerIdentity Owner = "identity"
	OwnerApp      Owner = "app"
	OwnerRegistry Owner = "registry"
	OwnerNode     Owner = "node"
)

// DefaultOwner is the owner of a layer when the cause does not name another.
func DefaultOwner(l Layer) Owner {
	switch l {
	case LayerConfig, LayerRuntime:
		return OwnerNode
	case LayerDNS:
		return OwnerDNS
	case LayerRoute, LayerTransfer:
		return OwnerNetwork
	case LayerTLS:
		return OwnerPKI
	case LayerAuth, LayerAuthz:
		return OwnerIdentity
	case LayerManifest:
		return OwnerApp
	case LayerRegistry:
		return OwnerRegistry
	}
	return OwnerNone
}

// Verdict is the answer pullpath gives: the first failing step in pull order
// and who has to fix what. Its JSON form is part of the contract.
type Verdict struct {
	OK       bool     `json:"ok"`
	Layer    Layer    `json:"layer"`
	Cause    string   `json:"cause,omitempty"`
	Role     Role     `json:"role,omitempty"`
	Owner    Owner    `json:"owner,omitempty"`
	Endpoint string   `json:"endpoint,omitempty"`
	Summary  string   `json:"summary"`
	Next     []string `json:"next"`
	// Evidence is the innermost error text or the observation the verdict
	// rests on, redacted.
	Evidence string `json:"evidence,omitempty"`
}

// OKVerdict is the verdict for a pull path that works.
func OKVerdict(summary string) Verdict {
	return Verdict{OK: true, Layer: LayerNone, Summary: summary, Next: []string{}}
}

// Warning is something that works today but will break or mislead.
type Warning struct {
	Code     string `json:"code"`
	Endpoint string `json:"endpoint,omitempty"`
	Message  string `json:"message"`
}

// Error is a failure of one step of the pull path. It carries the contract
// fields and wraps the underlying error (ggcr's transport.Error shape).
type Error struct {
	Layer    Layer
	Cause    string
	Role     Role
	Endpoint string
	// Detail is a short human sentence; the wrapped error holds the rest.
	Detail string
	Err    error
}

// Errorf builds an *Error for cause (whose layer comes from the catalogue)
// with a formatted detail.
func Errorf(cause string, role Role, endpoint string, format string, args ...any) *Error {
	return &Error{Layer: LayerOf(cause), Cause: cause, Role: role, Endpoint: endpoint, Detail: fmt.Sprintf(format, args...)}
}

// Wrap builds an *Error for cause around err.
func Wrap(cause string, role Role, endpoint string, err error) *Error {
	return &Error{Layer: LayerOf(cause), Cause: cause, Role: role, Endpoint: endpoint, Err: err}
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Cause)
	if e.Endpoint != "" {
		b.WriteString(" ")
		b.WriteString(e.Endpoint)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// AsError finds an *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// Furthest returns the failure furthest along the pull path (containerd's
// firstErrPriority idea): a higher layer rank wins; among equals the first
// given wins. It returns nil when every error is nil.
func Furthest(errs ...*Error) *Error {
	var best *Error
	for _, e := range errs {
		if e == nil {
			continue
		}
		if best == nil || e.Layer.Rank() > best.Layer.Rank() {
			best = e
		}
	}
	return best
}

// FromError turns a step failure into a full verdict: owner from the
// catalogue, summary and next steps from Describe, evidence from the error
// text. A detail given in the error refines the summary.
func FromError(e *Error) Verdict {
	d := Describe(e.Cause, e.Role, e.Endpoint)
	v := Verdict{
		Layer:    e.Layer,
		Cause:    e.Cause,
		Role:     e.Role,
		Owner:    OwnerOf(e.Cause),
		Endpoint: e.Endpoint,
		Summary:  d.Summary,
		Next:     d.Next,
	}
	if e.Detail != "" {
		v.Summary = d.Summary + " (" + e.Detail + ")"
	}
	if e.Err != nil {
		v.Evidence = e.Err.Error()
	}
	return v
}
