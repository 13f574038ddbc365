package verdict

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// codeUse is one place in the module's source where a code is handed to
// the vocabulary: the first argument of verdict.Errorf or verdict.Wrap, or
// the Code of a verdict.Warning.
type codeUse struct {
	Code string
	Pos  string
}

// moduleRoot is the directory of go.mod, two levels up from this package.
var moduleRoot = filepath.Join("..", "..")

// scanCodeUses parses every non-test Go file of the module and returns the
// codes passed to Errorf, Wrap and Warning{Code: ...} as string literals or
// as constants (a package's own constants, or verdict's), and the places
// where the code is computed at run time (a variable or a field), which the
// test cannot check and only counts.
func scanCodeUses(t *testing.T) (uses, literals []codeUse, dynamic []string) {
	t.Helper()
	fset := token.NewFileSet()
	// Parse by directory so that a package's constants can be resolved.
	pkgs := map[string][]*ast.File{}
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != moduleRoot && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkgs[filepath.Dir(path)] = append(pkgs[filepath.Dir(path)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	verdictConsts := packageConsts(pkgs[filepath.Join(moduleRoot, "internal", "verdict")])
	if len(verdictConsts) == 0 {
		t.Fatal("found no constants in internal/verdict: the scan is broken")
	}
	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		files := pkgs[dir]
		own := packageConsts(files)
		inVerdict := dir == filepath.Join(moduleRoot, "internal", "verdict")
		for _, f := range files {
			// The local name of the verdict import in this file.
			vname := ""
			for _, imp := range f.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/pullpath/pullpath/internal/verdict" {
					vname = "verdict"
					if imp.Name != nil {
						vname = imp.Name.Name
					}
				}
			}
			if vname == "" && !inVerdict {
				continue
			}
			isVerdict := func(e ast.Expr, name string) bool {
				switch x := e.(type) {
				case *ast.SelectorExpr:
					id, ok := x.X.(*ast.Ident)
					return ok && id.Name == vname && x.Sel.Name == name
				case *ast.Ident:
					return inVerdict && x.Name == name
				}
				return false
			}
			record := func(e ast.Expr) {
				pos := fset.Position(e.Pos())
				where := filepath.ToSlash(strings.TrimPrefix(pos.Filename, moduleRoot+string(filepath.Separator))) + ":" + strconv.Itoa(pos.Line)
				if s, ok := stringValue(e, own, verdictConsts, vname, inVerdict); ok {
					uses = append(uses, codeUse{Code: s, Pos: where})
					return
				}
				dynamic = append(dynamic, where)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.BasicLit:
					if s, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING && codeShape.MatchString(s) {
						pos := fset.Position(x.Pos())
						literals = append(literals, codeUse{Code: s, Pos: filepath.ToSlash(strings.TrimPrefix(pos.Filename, moduleRoot+string(filepath.Separator))) + ":" + strconv.Itoa(pos.Line)})
					}
				case *ast.CallExpr:
					if (isVerdict(x.Fun, "Errorf") || isVerdict(x.Fun, "Wrap")) && len(x.Args) > 0 {
						record(x.Args[0])
					}
				case *ast.CompositeLit:
					if isVerdict(x.Type, "Warning") {
						for _, el := range x.Elts {
							if kv, ok := el.(*ast.KeyValueExpr); ok {
								if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Code" {
									record(kv.Value)
								}
							}
						}
					}
				}
				return true
			})
		}
	}
	return uses, literals, dynamic
}

// codeShape is what a code looks like: a lowercase prefix, one dot, a
// lowercase word with dashes.
var codeShape = regexp.MustCompile(`^[a-z]+\.[a-z0-9-]+$`)

// notCodes are suffixes of code-shaped literals that are file or host
// names (config.json, registry.example).
var notCodes = map[string]bool{"json": true, "toml": true, "yaml": true, "yml": true, "conf": true, "go": true,
	"local": true, "test": true, "example": true, "internal": true, "io": true, "com": true, "net": true, "org": true}

// packageConsts evaluates the string constants declared in files.
func packageConsts(files []*ast.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if tv, err := types.Eval(token.NewFileSet(), nil, token.NoPos, types.ExprString(vs.Values[i])); err == nil && tv.Value != nil && tv.Value.Kind() == constant.String {
							out[name.Name] = constant.StringVal(tv.Value)
						}
					}
				}
			}
		}
	}
	return out
}

// stringValue is the constant string e stands for: a literal, a constant
// of the file's package, or a verdict constant.
func stringValue(e ast.Expr, own, verdictConsts map[string]string, vname string, inVerdict bool) (string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		}
	case *ast.Ident:
		if s, ok := own[x.Name]; ok {
			return s, true
		}
		if inVerdict {
			s, ok := verdictConsts[x.Name]
			return s, ok
		}
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok && id.Name == vname {
			s, ok := verdictConsts[x.Sel.Name]
			return s, ok
		}
	case *ast.ParenExpr:
		return stringValue(x.X, own, verdictConsts, vname, inVerdict)
	}
	return "", false
}

// TestEveryCodeRegistered fails when a code the source passes to Errorf or
// Wrap, or uses as a warning's code, is not in the catalogue: a typo, or a
// new code nobody documented. Codes computed at run time (a field holding
// a cause) are not checked here; they come from codes that are.
func TestEveryCodeRegistered(t *testing.T) {
	uses, literals, dynamic := scanCodeUses(t)
	if len(uses) < 100 {
		t.Fatalf("found only %d code uses in the module's source: the scan is broken", len(uses))
	}
	for _, u := range uses {
		if _, ok := Lookup(u.Code); !ok {
			t.Errorf("%s: code %q is not registered in the verdict catalogue (internal/verdict/catalogue*.go)", u.Pos, u.Code)
		}
	}
	// A classifier returns its code as a literal that reaches Wrap through
	// a variable: so every code-shaped literal whose prefix is a code
	// prefix must be registered too.
	prefixes := map[string]bool{}
	for _, c := range append(Causes(), Warnings()...) {
		p, _, _ := strings.Cut(c.Code, ".")
		prefixes[p] = true
	}
	checked := 0
	for _, l := range literals {
		p, suffix, _ := strings.Cut(l.Code, ".")
		if !prefixes[p] || notCodes[suffix] {
			continue
		}
		checked++
		if _, ok := Lookup(l.Code); !ok {
			t.Errorf("%s: the literal %q looks like a code and is not registered in the verdict catalogue (a file or host name: add its suffix to notCodes)", l.Pos, l.Code)
		}
	}
	t.Logf("%d code uses and %d code-shaped literals checked, %d codes computed at run time", len(uses), checked, len(dynamic))
	if os.Getenv("PULLPATH_LIST_CODES") == "1" {
		for _, u := range uses {
			t.Logf("%s %s", u.Code, u.Pos)
		}
		for _, d := range dynamic {
			t.Logf("dynamic %s", d)
		}
	}
}

// TestWarningEntries checks the warning kind of the catalogue: each has a
// layer, an owner, a meaning and a next step, and the kinds do not mix.
func TestWarningEntries(t *testing.T) {
	ws := Warnings()
	if len(ws) < 17 {
		t.Fatalf("the catalogue holds %d warnings, want at least the 17 the reports carry", len(ws))
	}
	for _, w := range ws {
		if w.Kind != KindWarning || !w.Layer.Valid() || w.Layer == LayerNone || OwnerOf(w.Code) == OwnerNone || w.Summary == "" || len(w.Next) == 0 {
			t.Errorf("warning %+v: want kind warning, a layer, an owner, a summary and next steps", w)
		}
	}
	for _, c := range Causes() {
		if c.Kind != KindCause {
			t.Errorf("Causes() returned %s of kind %q", c.Code, c.Kind)
		}
	}
	if w, ok := Lookup("dns.hosts-entry"); !ok || w.Kind != KindWarning || LayerOf(w.Code) != LayerDNS {
		t.Errorf("Lookup(dns.hosts-entry) = %+v, %v; want a dns warning", w, ok)
	}
}
