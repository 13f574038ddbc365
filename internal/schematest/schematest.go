// Package schematest validates real command output against the JSON Schemas
// of schema/ for the tests of every command package.
package schematest

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

// Compile compiles every schema in schema.FS, asserting formats
// (date-time).
func Compile() (map[string]*jsonschema.Schema, error) {
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

// Validate checks that out is exactly one JSON document of kind and
// that it validates against kind's schema.
func Validate(t testing.TB, kind, out string) {
	t.Helper()
	ss, err := Compile()
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
