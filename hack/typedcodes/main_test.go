package main

import (
	"strings"
	"testing"
)

var testConsts = map[string]string{"dns.nxdomain": "CodeDNSNXDomain", "route.timeout": "CodeRouteTimeout",
	"dns.hosts-entry": "CodeDNSHostsEntry", "unknown": "CodeUnknown"}

func TestRewrite(t *testing.T) {
	src := `package x

import (
	"fmt"

	"example.com/other"
)

type T struct {
	A string ` + "`json:\"route.timeout\"`" + `
}

func classify(err error) string {
	if err == nil {
		return "unknown"
	}
	return "route.timeout"
}

func f() {
	_ = verdictless("dns.nxdomain", "registry.example", other.X)
	fmt.Println("dns.hosts-entry is a warning")
}
`
	out, n, err := rewrite([]byte(src), testConsts, false)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	if !strings.Contains(got, "\"example.com/other\"\n\t\"github.com/pullpath/pullpath/internal/verdict\"\n)") {
		t.Errorf("the verdict import is not the last of the block's last group:\n%s", got)
	}
	for _, want := range []string{`return verdict.CodeRouteTimeout`, `verdictless(verdict.CodeDNSNXDomain,`, `"github.com/pullpath/pullpath/internal/verdict"`,
		`return "unknown"`, "`json:\"route.timeout\"`", `"dns.hosts-entry is a warning"`, `"registry.example"`} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten source lacks %s:\n%s", want, got)
		}
	}
	if n != 2 {
		t.Errorf("rewrote %d literals, want 2:\n%s", n, got)
	}
	again, n2, err := rewrite(out, testConsts, false)
	if err != nil || n2 != 0 || string(again) != got {
		t.Errorf("second run: %d rewrites, err %v, changed %v; want none", n2, err, string(again) != got)
	}
}

func TestRewriteCodePositions(t *testing.T) {
	src := `package x

import v "github.com/pullpath/pullpath/internal/verdict"

func f() error {
	_ = v.Warning{Code: "dns.hosts-entry", Message: "m"}
	_ = v.Verdict{Cause: "unknown"}
	return v.Errorf("unknown", v.RoleNone, "", "x")
}
`
	out, n, err := rewrite([]byte(src), testConsts, false)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{`Code: v.CodeDNSHostsEntry`, `Cause: v.CodeUnknown`, `v.Errorf(v.CodeUnknown,`} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten source lacks %s:\n%s", want, got)
		}
	}
	if n != 3 || strings.Count(got, "internal/verdict") != 1 {
		t.Errorf("rewrote %d literals (want 3), imports:\n%s", n, got)
	}

	// Inside package verdict: unqualified, and the catalogue is left alone.
	in := "package verdict\n\nfunc g() *Error { return Wrap(\"route.timeout\", RoleNone, \"\", nil) }\n"
	out, n, err = rewrite([]byte(in), testConsts, true)
	if err != nil || n != 1 || !strings.Contains(string(out), "Wrap(CodeRouteTimeout,") || strings.Contains(string(out), "import") {
		t.Errorf("package verdict: %d rewrites, err %v:\n%s", n, err, out)
	}
	for _, cat := range []string{
		"package verdict\n\nfunc init() { register(Cause{Code: \"route.timeout\"}) }\n",
		"package verdict\n\nvar routeEntries = []Cause{Cause{Code: \"route.timeout\"}}\n",
		"package verdict\n\nvar dnsEntries = []Cause{warning(\"route.timeout\", LayerRoute, OwnerNetwork, \"s\")}\n",
	} {
		if out, n, _ := rewrite([]byte(cat), testConsts, true); n != 0 || string(out) != cat {
			t.Errorf("the catalogue was rewritten:\n%s", out)
		}
	}
}

func TestLoadConstsFromCodesFile(t *testing.T) {
	c, err := loadConsts("../../internal/verdict/codes.go")
	if err != nil {
		t.Fatal(err)
	}
	if c["dns.hosts-entry"] != "CodeDNSHostsEntry" || c["route.timeout"] != "CodeRouteTimeout" || len(c) < 90 {
		t.Errorf("loadConsts: %d constants, dns.hosts-entry → %q", len(c), c["dns.hosts-entry"])
	}
}
