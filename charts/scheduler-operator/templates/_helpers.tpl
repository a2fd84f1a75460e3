{{/* The operator's namespace. */}}
{{- define "scheduler-operator.namespace" -}}
{{ .Values.namespace.name }}
{{- end }}

{{/* The operator's image: repository@digest when a digest is given, else repository:tag. */}}
{{- define "scheduler-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{/* The labels and Argo CD sync wave every object of the install carries. */}}
{{- define "scheduler-operator.metadata" -}}
labels:
  app.kubernetes.io/name: scheduler-operator
annotations:
  argocd.argoproj.io/sync-wave: "-5"
{{- end }}

{{/* The operator's ServiceAccount, as RBAC subjects name it. */}}
{{- define "scheduler-operator.subject" -}}
- kind: ServiceAccount
  name: scheduler-operator
  namespace: {{ include "scheduler-operator.namespace" . }}
{{- end }}
