{{/*
Chart name, truncated to the 63 characters a label value allows.
*/}}
{{- define "docgen.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: RELEASE-docgen, or RELEASE when it already contains the chart name.
*/}}
{{- define "docgen.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart label value: NAME-VERSION.
*/}}
{{- define "docgen.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Standard labels of every resource.
*/}}
{{- define "docgen.labels" -}}
helm.sh/chart: {{ include "docgen.chart" . }}
{{ include "docgen.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: docgen
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Selector labels of the whole release (every role).
*/}}
{{- define "docgen.selectorLabels" -}}
app.kubernetes.io/name: {{ include "docgen.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Name of a role's resources: FULLNAME-ROLE. Call with (dict "root" $ "role" "api").
*/}}
{{- define "docgen.componentName" -}}
{{- printf "%s-%s" (include "docgen.fullname" .root) .role | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of a role's resources. Call with (dict "root" $ "role" "api").
*/}}
{{- define "docgen.componentLabels" -}}
{{ include "docgen.labels" .root }}
app.kubernetes.io/component: {{ .role }}
{{- end }}

{{/*
Selector labels of one role. Call with (dict "root" $ "role" "api").
*/}}
{{- define "docgen.componentSelectorLabels" -}}
{{ include "docgen.selectorLabels" .root }}
app.kubernetes.io/component: {{ .role }}
{{- end }}

{{/*
ServiceAccount the pods run as.
*/}}
{{- define "docgen.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "docgen.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Image reference: repository@digest, or repository:tag (tag defaults to appVersion).
*/}}
{{- define "docgen.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/*
Name of the Secret holding DOCGEN_ADMIN_TOKEN, DOCGEN_SECRET_KEY, DOCGEN_MONGODB_URL and the S3 keys.
*/}}
{{- define "docgen.secretName" -}}
{{- if .Values.secrets.existingSecret }}
{{- .Values.secrets.existingSecret }}
{{- else }}
{{- include "docgen.fullname" . }}
{{- end }}
{{- end }}

{{/*
A listen address for a DOCGEN_*_ADDR variable: HOST:PORT, IPv6 hosts in brackets.
*/}}
{{- define "docgen.listenAddress" -}}
{{- if contains ":" .host }}
{{- printf "[%s]:%d" .host (int64 .port) }}
{{- else }}
{{- printf "%s:%d" .host (int64 .port) }}
{{- end }}
{{- end }}

{{/*
A number as docgen reads it: integers without an exponent (YAML numbers arrive as floats,
and 1048576 would otherwise print as 1.048576e+06).
*/}}
{{- define "docgen.number" -}}
{{- if eq (float64 .) (floor .) }}
{{- int64 . }}
{{- else }}
{{- . }}
{{- end }}
{{- end }}

{{/*
terminationGracePeriodSeconds of a role: longer than DOCGEN_SHUTDOWN_GRACE_MS plus the preStop
pause, so docgen exits on its own after handing work back, before the kubelet's SIGKILL.
Call with (dict "root" $ "values" $values).
*/}}
{{- define "docgen.terminationGracePeriodSeconds" -}}
{{- $graceSeconds := div (add (int64 .root.Values.config.shutdownGraceMs) 999) 1000 }}
{{- $preStop := int64 .values.preStopSleepSeconds }}
{{- if kindIs "invalid" .values.terminationGracePeriodSeconds }}
{{- add $graceSeconds $preStop 10 }}
{{- else }}
{{- $minimum := add $graceSeconds $preStop 2 }}
{{- if lt (int64 .values.terminationGracePeriodSeconds) $minimum }}
{{- fail (printf "terminationGracePeriodSeconds %d is too short: config.shutdownGraceMs (%d ms) plus preStopSleepSeconds (%d s) needs at least %d" (int64 .values.terminationGracePeriodSeconds) (int64 .root.Values.config.shutdownGraceMs) $preStop $minimum) }}
{{- end }}
{{- int64 .values.terminationGracePeriodSeconds }}
{{- end }}
{{- end }}

{{/*
Readiness/liveness/startup probe timings (only the keys that are set).
*/}}
{{- define "docgen.probeTimings" -}}
{{- range $key := list "initialDelaySeconds" "periodSeconds" "timeoutSeconds" "failureThreshold" "successThreshold" }}
{{- if hasKey $ $key }}
{{ $key }}: {{ int64 (get $ $key) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
NetworkPolicy egress rules every role needs: DNS, MongoDB, NATS and object storage.
*/}}
{{- define "docgen.networkPolicy.dependencyEgress" -}}
- ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
  {{- with .Values.networkPolicy.dnsTo }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- range $name := list "mongodb" "nats" "objectStorage" }}
{{- $dep := get $.Values.networkPolicy.egress $name }}
- ports:
    {{- range $port := $dep.ports }}
    - port: {{ int64 $port }}
      protocol: TCP
    {{- end }}
  {{- with $dep.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
A NetworkPolicy ingress rule for one port. Call with (dict "port" PORT "from" PEERS).
*/}}
{{- define "docgen.networkPolicy.ingressRule" -}}
- ports:
    - port: {{ int64 .port }}
      protocol: TCP
  {{- with .from }}
  from:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
