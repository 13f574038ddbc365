{{- define "pullpath-monitor.labels" -}}
app.kubernetes.io/name: pullpath-monitor
{{- end -}}
