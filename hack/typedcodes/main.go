// Command typedcodes replaces the literal cause and warning codes in Go
// source with the constants of internal/verdict/codes.go (generated from
// the verdict catalogue): "dns.nxdomain" becomes verdict.CodeDNSNXDomain.
// It is a maintenance tool, run after catalogue changes or merges, and it
// is idempotent: a second run changes nothing.
//
//	go run ./hack/typedcodes ./internal/netpath ./internal/registry   # list what would change
//	go run ./hack/typedcodes -w ./...                                  # rewrite in place
//
// What it rewrites, in non-test files:
//   - a string literal equal to a registered code that has a dot
//     ("route.timeout"), wherever it stands: a classifier's return, a case,
//     a comparison, an argument;
//   - "unknown", the one code without a dot, only where it is a code: the
//     first argument of verdict.Errorf or verdict.Wrap, a Warning's Code, an
//     Error's or a Verdict's Cause.
//
// The catalogue itself (the files of internal/verdict that write its
// entries: Cause literals, warning(...) or register calls) keeps its literals: it defines the codes the constants are made from.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const verdictPath = "github.com/pullpath/pullpath/internal/verdict"

func main() {
	write := flag.Bool("w", false, "write the rewritten files (default: list them)")
	codesFile := flag.String("codes", "", "the constants file (default: internal/verdict/codes.go of the module)")
	flag.Parse()
	if err := run(*write, *codesFile, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "typedcodes:", err)
		os.Exit(1)
	}
}

func run(write bool, codesFile string, patterns []string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if codesFile == "" {
		codesFile = filepath.Join(root, "internal", "verdict", "codes.go")
	}
	consts, err := loadConsts(codesFile)
	if err != nil {
		return err
	}
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	files, err := goFiles(patterns)
	if err != nil {
		return err
	}
	verdictDir := filepath.Join(root, "internal", "verdict")
	changed := 0
	for _, path := range files {
		abs, _ := filepath.Abs(path)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, n, err := rewrite(src, consts, filepath.Dir(abs) == verdictDir)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if n == 0 {
			continue
		}
		changed++
		fmt.Printf("%s: %d code(s)\n", path, n)
		if write {
			if err := os.WriteFile(path, out, 0o644); err != nil {
				return err
			}
		}
	}
	if !write && changed > 0 {
		fmt.Printf("%d file(s) to rewrite; run with -w\n", changed)
	}
	return nil
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// loadConsts reads the string constants of the codes file: code → name.
func loadConsts(path string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						return nil, err
					}
					out[v] = name.Name
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no code constants", path)
	}
	return out, nil
}

// goFiles expands dir and dir/... patterns to the non-test Go files under
// them, skipping testdata and hidden directories.
func goFiles(patterns []string) ([]string, error) {
	var out []string
	for _, p := range patterns {
		dir, recursive := strings.CutSuffix(p, "/...")
		if dir == "." && recursive || p == "..." {
			dir, recursive = ".", true
		}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != dir && (!recursive || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

type edit struct {
	start, end int
	text       string
}

// rewrite replaces the codes in one file's source and returns the new
// source and how many literals it replaced. inVerdict is true for the
// files of package verdict itself, which use the constants unqualified.
func rewrite(src []byte, consts map[string]string, inVerdict bool) ([]byte, int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, 0, err
	}
	if ast.IsGenerated(f) {
		return src, 0, nil // codes.go itself, and any other generated file
	}
	qual := ""
	hasImport := false
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == verdictPath {
			hasImport = true
			qual = "verdict"
			if imp.Name != nil {
				qual = imp.Name.Name
			}
		}
	}
	if inVerdict {
		qual = ""
		// The catalogue defines the codes: leave the files that write
		// its entries (a Cause literal, a warning(...) or a register call).
		defines := false
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "register" || id.Name == "warning") {
					defines = true
				}
			case *ast.CompositeLit:
				if id, ok := x.Type.(*ast.Ident); ok && id.Name == "Cause" {
					defines = true
				}
			}
			return !defines
		})
		if defines {
			return src, 0, nil
		}
	} else if qual == "" {
		qual = "verdict"
	}
	isVerdict := func(e ast.Expr, name string) bool {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			id, ok := x.X.(*ast.Ident)
			return ok && hasImport && id.Name == qual && x.Sel.Name == name
		case *ast.Ident:
			return inVerdict && x.Name == name
		}
		return false
	}
	// Literals in a code position may be any code, "unknown" included.
	codePos := map[*ast.BasicLit]bool{}
	skip := map[*ast.BasicLit]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ImportSpec:
			skip[x.Path] = true
		case *ast.Field:
			if x.Tag != nil {
				skip[x.Tag] = true
			}
		case *ast.CallExpr:
			if (isVerdict(x.Fun, "Errorf") || isVerdict(x.Fun, "Wrap")) && len(x.Args) > 0 {
				if lit, ok := x.Args[0].(*ast.BasicLit); ok {
					codePos[lit] = true
				}
			}
		case *ast.CompositeLit:
			field := ""
			switch {
			case isVerdict(x.Type, "Warning"):
				field = "Code"
			case isVerdict(x.Type, "Error"), isVerdict(x.Type, "Verdict"):
				field = "Cause"
			}
			if field == "" {
				return true
			}
			for _, el := range x.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == field {
						if lit, ok := kv.Value.(*ast.BasicLit); ok {
							codePos[lit] = true
						}
					}
				}
			}
		}
		return true
	})
	var edits []edit
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || skip[lit] {
			return true
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		name, ok := consts[v]
		if !ok || (!strings.Contains(v, ".") && !codePos[lit]) {
			return true
		}
		if qual != "" {
			name = qual + "." + name
		}
		edits = append(edits, edit{fset.Position(lit.Pos()).Offset, fset.Position(lit.End()).Offset, name})
		return true
	})
	if len(edits) == 0 {
		return src, 0, nil
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	out := append([]byte(nil), src...)
	for _, e := range edits {
		out = append(out[:e.start], append([]byte(e.text), out[e.end:]...)...)
	}
	if !inVerdict && !hasImport {
		out, err = addImport(out)
		if err != nil {
			return nil, 0, err
		}
	}
	formatted, err := format.Source(out)
	if err != nil {
		return nil, 0, fmt.Errorf("formatting the rewritten file: %w", err)
	}
	return formatted, len(edits), nil
}

// addImport adds the verdict import as the last spec of the file's first
// import declaration (where the project's own imports go), or as a new
// declaration after the package clause.
func addImport(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	spec := strconv.Quote(verdictPath)
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		if gd.Rparen.IsValid() {
			at := fset.Position(gd.Rparen).Offset
			line := "\n" + spec + "\n"
			if at > 0 && src[at-1] == '\n' {
				line = "\t" + spec + "\n"
			}
			return bytes.Join([][]byte{src[:at], []byte(line), src[at:]}, nil), nil
		}
		// import "x": make it a block.
		start, end := fset.Position(gd.Pos()).Offset, fset.Position(gd.End()).Offset
		one := src[start+len("import") : end]
		return bytes.Join([][]byte{src[:start], []byte("import (\n" + strings.TrimSpace(string(one)) + "\n\n" + spec + "\n)"), src[end:]}, nil), nil
	}
	at := fset.Position(f.Name.End()).Offset
	return bytes.Join([][]byte{src[:at], []byte("\n\nimport " + spec + "\n"), src[at:]}, nil), nil
}
