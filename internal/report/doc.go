// Package report renders pullpath results: text (one line per step, then
// the verdict, owner, next steps and a summary line; colour only when asked)
// and JSON (the contract). Renderers are pure functions of their input.
package report
