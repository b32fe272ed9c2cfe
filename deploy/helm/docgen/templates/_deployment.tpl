{{/*
The Deployment of one role; deployment-ROLE.yaml call it with (dict "root" $ "role" "api").
$values is the role's section of values.yaml (api, render or webhooks): every key used as
$values.<key> exists in all three.
*/}}
{{- define "docgen.deployment" -}}
{{- $root := .root }}
{{- $role := .role }}
{{- $values := index $root.Values $role }}
{{- $ctx := dict "root" $root "role" $role }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "docgen.componentName" $ctx }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "docgen.componentLabels" $ctx | nindent 4 }}
spec:
  {{- /* An HPA (ours, or the one KEDA creates) owns the replica count. */}}
  {{- if not (or $values.autoscaling.enabled (dig "keda" "enabled" false $values)) }}
  replicas: {{ int64 $values.replicaCount }}
  {{- end }}
  revisionHistoryLimit: {{ int64 $root.Values.revisionHistoryLimit }}
  selector:
    matchLabels:
      {{- include "docgen.componentSelectorLabels" $ctx | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: {{ $values.strategy.maxSurge }}
      maxUnavailable: {{ $values.strategy.maxUnavailable }}
  template:
    metadata:
      labels:
        {{- include "docgen.componentLabels" $ctx | nindent 8 }}
        {{- with $values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # A changed ConfigMap or Secret rolls the pods (environment variables are read once).
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- if not $root.Values.secrets.existingSecret }}
        checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
        {{- end }}
        {{- if $root.Values.metrics.podAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ int64 $root.Values.ports.ops | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "docgen.serviceAccountName" $root }}
      # docgen never calls the Kubernetes API.
      automountServiceAccountToken: false
      # Service links would inject DOCGEN_*_PORT variables for Services named docgen-….
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ include "docgen.terminationGracePeriodSeconds" (dict "root" $root "values" $values) }}
      {{- /* Chromium's sandbox needs user namespaces, which the runtime's default profile forbids. */}}
      {{- $podSecurity := deepCopy $root.Values.podSecurityContext }}
      {{- if and (eq $role "render") (not $root.Values.config.render.noSandbox) }}
      {{- $_ := set $podSecurity "seccompProfile" $root.Values.render.chromiumSeccompProfile }}
      {{- end }}
      securityContext:
        {{- toYaml $podSecurity | nindent 8 }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: docgen
          image: {{ include "docgen.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: ["serve", "--role", {{ $role | quote }}]
          ports:
            {{- if eq $role "api" }}
            - name: public
              containerPort: {{ int64 $root.Values.ports.public }}
              protocol: TCP
            - name: admin
              containerPort: {{ int64 $root.Values.ports.admin }}
              protocol: TCP
            {{- end }}
            - name: ops
              containerPort: {{ int64 $root.Values.ports.ops }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "docgen.fullname" $root }}
          env:
            # The root filesystem is read-only: Chromium and Node keep their files in /tmp.
            - name: HOME
              value: /tmp
            {{- if eq $role "api" }}
            # Only the api role serves the admin API, so only it gets the operator token.
            - name: DOCGEN_ADMIN_TOKEN
              valueFrom:
                secretKeyRef:
                  name: {{ include "docgen.secretName" $root }}
                  key: {{ $root.Values.secrets.keys.adminToken }}
            {{- end }}
            - name: DOCGEN_SECRET_KEY
              valueFrom:
                secretKeyRef:
                  name: {{ include "docgen.secretName" $root }}
                  key: {{ $root.Values.secrets.keys.secretKey }}
            - name: DOCGEN_MONGODB_URL
              valueFrom:
                secretKeyRef:
                  name: {{ include "docgen.secretName" $root }}
                  key: {{ $root.Values.secrets.keys.mongodbUrl }}
            - name: DOCGEN_S3_ACCESS_KEY
              valueFrom:
                secretKeyRef:
                  name: {{ include "docgen.secretName" $root }}
                  key: {{ $root.Values.secrets.keys.s3AccessKey }}
            - name: DOCGEN_S3_SECRET_KEY
              valueFrom:
                secretKeyRef:
                  name: {{ include "docgen.secretName" $root }}
                  key: {{ $root.Values.secrets.keys.s3SecretKey }}
            {{- with $values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          startupProbe:
            httpGet:
              path: /healthz
              port: ops
            {{- include "docgen.probeTimings" $values.probes.startup | trim | nindent 12 }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: ops
            {{- include "docgen.probeTimings" $values.probes.liveness | trim | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: ops
            {{- include "docgen.probeTimings" $values.probes.readiness | trim | nindent 12 }}
          {{- if gt (int64 $values.preStopSleepSeconds) 0 }}
          lifecycle:
            preStop:
              exec:
                command: ["sleep", {{ int64 $values.preStopSleepSeconds | quote }}]
          {{- end }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- if eq $role "render" }}
            - name: dshm
              mountPath: /dev/shm
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ $root.Values.tmpVolume.sizeLimit }}
        {{- if eq $role "render" }}
        # Chromium shares rendered pages through /dev/shm; the runtime's 64 MiB default is too small.
        - name: dshm
          emptyDir:
            medium: Memory
            sizeLimit: {{ $root.Values.render.shm.sizeLimit }}
        {{- end }}
{{- end }}
