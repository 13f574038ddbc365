package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// printRusage writes one line: ru_maxrss (the peak, as rsswatch reports it)
// and RssAnon / RssFile of /proc/self/status at the end.
func printRusage(w io.Writer) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintf(w, "pullpath-node: getrusage: %v\n", err)
		return
	}
	anon, file := "?", "?"
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			switch k {
			case "RssAnon":
				anon = strings.Fields(v)[0]
			case "RssFile":
				file = strings.Fields(v)[0]
			}
		}
	}
	fmt.Fprintf(w, "pullpath-node: rusage: maxrss_kib=%d rss_anon_kib=%s rss_file_kib=%s\n", ru.Maxrss, anon, file)
}
