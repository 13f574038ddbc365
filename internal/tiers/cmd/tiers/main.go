// Command tiers is hack/test.sh's side of package tiers.
//
//	tiers env      for every tier whose variable is not set and whose
//	               prerequisites this machine has, prints "export VAR=1"
//	               (for eval); says on stderr which tiers are on, which
//	               are requested, and what the others lack
//	tiers filter   reads `go test -json` on stdin and prints the package
//	               results, every "tier NAME:" line, and the whole output
//	               of each failed test; it exits 1 when a test failed
package main

import (
	"fmt"
	"os"

	"github.com/pullpath/pullpath/internal/tiers"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tiers env|filter")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "env":
		env()
	case "filter":
		failed, err := tiers.Filter(os.Stdin, os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tiers filter:", err)
			os.Exit(2)
		}
		if failed {
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: tiers env|filter")
		os.Exit(2)
	}
}

func env() {
	for _, t := range tiers.All {
		missing := t.Missing()
		switch {
		case t.Requested() && missing != nil:
			fmt.Fprintf(os.Stderr, "test.sh: tier %s requested (%s) but %v: its tests will FAIL (%s)\n", t.Name, t.Env, missing, t.Install)
		case t.Requested():
			fmt.Fprintf(os.Stderr, "test.sh: tier %s on (%s set)\n", t.Name, t.Env)
		case missing != nil && t.Env == tiers.EnvKubeBin:
			fmt.Fprintf(os.Stderr, "test.sh: tier %s skipped: %v\n", t.Name, missing)
		case missing != nil:
			fmt.Fprintf(os.Stderr, "test.sh: tier %s skipped: %v (%s)\n", t.Name, missing, t.Install)
		case t.Env == tiers.EnvKubeBin:
			// Its variable is the binaries' directory: the script sets it.
		default:
			fmt.Printf("export %s=1\n", t.Env)
			fmt.Fprintf(os.Stderr, "test.sh: tier %s on (this machine has what it needs)\n", t.Name)
		}
	}
}
