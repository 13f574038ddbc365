package verdict

import (
	"errors"
	"strings"
	"testing"
)

func TestCatalogueIsConsistent(t *testing.T) {
	for _, c := range Causes() {
		prefix, _, _ := strings.Cut(c.Code, ".")
		if Layer(prefix) != c.Layer {
			t.Errorf("cause %q has layer %q, want its prefix", c.Code, c.Layer)
		}
		if c.Summary == "" || len(c.Next) == 0 {
			t.Errorf("cause %q has no summary or next steps", c.Code)
		}
		if c.Layer != LayerUnknown && OwnerOf(c.Code) == OwnerNone {
			t.Errorf("cause %q has no owner", c.Code)
		}
	}
}

func TestR7TransportSaysCredentialsIrrelevant(t *testing.T) {
	for _, c := range Causes() {
		d := Describe(c.Code, RoleRegistry, "r.example:443")
		says := strings.Contains(strings.Join(d.Next, " "), "Credentials are irrelevant")
		transport := c.Layer == LayerDNS || c.Layer == LayerRoute || (c.Layer == LayerTLS && c.Code != "tls.plain-http")
		if transport && !says {
			t.Errorf("Describe(%q) does not say credentials are irrelevant", c.Code)
		}
		if (c.Layer == LayerAuth || c.Layer == LayerAuthz) && says {
			t.Errorf("Describe(%q) says credentials are irrelevant for an identity failure", c.Code)
		}
	}
}

func TestFurthest(t *testing.T) {
	dns := Errorf("dns.nxdomain", RoleMirror, "m:443", "x")
	tr := Errorf("transfer.digest", RoleBlob, "b:443", "y")
	au := Errorf("auth.no-credentials", RoleAuth, "a:443", "z")
	if got := Furthest(dns, nil, au, tr); got != tr {
		t.Errorf("Furthest = %v, want %v", got, tr)
	}
	if got := Furthest(nil, nil); got != nil {
		t.Errorf("Furthest(nil, nil) = %v, want nil", got)
	}
	first := Errorf("route.timeout", RoleRegistry, "r1:443", "")
	second := Errorf("route.refused", RoleRegistry, "r2:443", "")
	if got := Furthest(first, second); got != first {
		t.Errorf("Furthest tie = %v, want the first", got)
	}
}

func TestFromErrorAndUnwrap(t *testing.T) {
	inner := errors.New("dial tcp 127.0.0.1:443: connect: connection refused")
	e := Wrap("route.refused", RoleBlob, "blob.example:443", inner)
	if !errors.Is(e, inner) {
		t.Fatal("Wrap does not unwrap to the inner error")
	}
	v := FromError(e)
	if v.Layer != LayerRoute || v.Owner != OwnerNetwork || v.Role != RoleBlob || v.Endpoint != "blob.example:443" {
		t.Errorf("FromError = %+v", v)
	}
	if !strings.Contains(v.Summary, "blob.example:443") || !strings.Contains(v.Next[0], "Only the manifest endpoint is reachable") {
		t.Errorf("FromError summary/next = %q / %q", v.Summary, v.Next)
	}
	if v.Evidence != inner.Error() {
		t.Errorf("evidence = %q", v.Evidence)
	}
}

func TestLayerOfUnknownCodes(t *testing.T) {
	for code, want := range map[string]Layer{"dns.weird": LayerDNS, "bogus": LayerUnknown, "": LayerUnknown, "none.x": LayerUnknown} {
		if got := LayerOf(code); got != want {
			t.Errorf("LayerOf(%q) = %q, want %q", code, got, want)
		}
	}
}
