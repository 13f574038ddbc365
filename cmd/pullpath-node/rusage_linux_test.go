package main

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
)

func TestPrintRusage(t *testing.T) {
	var b bytes.Buffer
	printRusage(&b)
	m := regexp.MustCompile(`^pullpath-node: rusage: maxrss_kib=(\d+) rss_anon_kib=(\d+) rss_file_kib=(\d+)\n$`).FindStringSubmatch(b.String())
	if m == nil {
		t.Fatalf("rusage line %q", b.String())
	}
	peak, _ := strconv.Atoi(m[1])
	anon, _ := strconv.Atoi(m[2])
	file, _ := strconv.Atoi(m[3])
	if peak <= 0 || anon <= 0 || file <= 0 || anon+file > peak+1024 {
		t.Errorf("peak %d KiB, anon %d, file %d: want positive, anon+file within the peak", peak, anon, file)
	}
}
