// Package schema holds the JSON Schemas (draft 2020-12) of every document
// pullpath prints with -o json or -o yaml, one file per kind, plus
// common.schema.json with the shared definitions (verdict, warning, the
// probe report). They are the published form of docs/contract.md: tests in
// internal/cli validate the real output of every command against them, so
// a renamed or removed field fails a test.
package schema

import "embed"

// FS holds the schema files.
//
//go:embed *.schema.json
var FS embed.FS

// Files maps each document kind to its schema file in FS.
var Files = map[string]string{
	"ProbeReport":       "probereport.schema.json",
	"ExplainReport":     "explainreport.schema.json",
	"DiagnoseReport":    "diagnosereport.schema.json",
	"DemoReport":        "demoreport.schema.json",
	"CauseList":         "causelist.schema.json",
	"VersionInfo":       "versioninfo.schema.json",
	"MonitorStatus":     "monitorstatus.schema.json",
	"MonitorResults":    "monitorresults.schema.json",
	"MonitorNodeResult": "monitornoderesult.schema.json",
	"AzureReport":       "azurereport.schema.json",
}

// Base is the URL prefix of every schema's $id.
const Base = "https://pullpath.dev/schema/v1alpha1/"
