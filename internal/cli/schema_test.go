package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pullpath/pullpath/schema"
)

var (
	schemasOnce sync.Once
	schemas     map[string]*jsonschema.Schema
	schemasErr  error
)

// compileSchemas compiles every schema in schema.FS, asserting formats
// (date-time).
func compileSchemas() (map[string]*jsonschema.Schema, error) {
	schemasOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		names, err := fs.Glob(schema.FS, "*.schema.json")
		if err != nil {
			schemasErr = err
			return
		}
		for _, n := range names {
			b, err := fs.ReadFile(schema.FS, n)
			if err != nil {
				schemasErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				schemasErr = fmt.Errorf("%s: %w", n, err)
				return
			}
			if err := c.AddResource(schema.Base+n, doc); err != nil {
				schemasErr = fmt.Errorf("%s: %w", n, err)
				return
			}
		}
		schemas = map[string]*jsonschema.Schema{}
		for kind, n := range schema.Files {
			s, err := c.Compile(schema.Base + n)
			if err != nil {
				schemasErr = fmt.Errorf("compiling %s: %w", n, err)
				return
			}
			schemas[kind] = s
		}
	})
	return schemas, schemasErr
}

// validateDoc checks that out is exactly one JSON document of kind and
// that it validates against kind's schema.
func validateDoc(t *testing.T, kind, out string) {
	t.Helper()
	ss, err := compileSchemas()
	if err != nil {
		t.Fatalf("schemas: %v", err)
	}
	s, ok := ss[kind]
	if !ok {
		t.Fatalf("no schema for kind %s", kind)
	}
	if strings.Contains(out, "null") {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(strings.TrimRight(line, ","), ": null") {
				t.Errorf("%s holds a null: %s", kind, line)
			}
		}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%s is not one JSON document: %v\n%.400s", kind, err, out)
	}
	if err := s.Validate(doc); err != nil {
		t.Errorf("%s does not validate against %s:\n%v\n--- output:\n%.2000s", kind, schema.Files[kind], err, out)
	}
}

// TestSchemasRejectDrift checks that the schemas bite: a document with a
// renamed field, a removed required field or a Go field name fails.
func TestSchemasRejectDrift(t *testing.T) {
	ss, err := compileSchemas()
	if err != nil {
		t.Fatal(err)
	}
	good := `{"apiVersion":"pullpath.dev/v1alpha1","kind":"ExplainReport","input":{"lines":1,"bytes":10,"skipped_lines":0},
"findings":[{"verdict":{"ok":false,"layer":"dns","cause":"dns.nxdomain","summary":"s","next":[]},"count":1,"image":"","host":"h","runtime":"","ambiguous":[],"source":"text","message":"m"}]}`
	for _, tt := range []struct {
		name, doc string
		valid     bool
	}{
		{"good", good, true},
		{"renamed field", strings.Replace(good, `"count"`, `"Count"`, 1), false},
		{"removed field", strings.Replace(good, `"host":"h",`, ``, 1), false},
		{"ok verdict without cause ok", strings.Replace(good, `"ok":false,"layer":"dns","cause":"dns.nxdomain"`, `"ok":true,"layer":"none","cause":"dns.nxdomain"`, 1), false},
		{"null list", strings.Replace(good, `"ambiguous":[]`, `"ambiguous":null`, 1), false},
		{"wrong apiVersion", strings.Replace(good, "v1alpha1", "v1", 1), false},
		{"wrong kind", strings.Replace(good, `"ExplainReport"`, `"ProbeReport"`, 1), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			err = ss["ExplainReport"].Validate(doc)
			if (err == nil) != tt.valid {
				t.Errorf("Validate(%s) = %v, want valid %v", tt.name, err, tt.valid)
			}
		})
	}
}
