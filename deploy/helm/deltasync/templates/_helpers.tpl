{{/* The chart's name: app.kubernetes.io/name, and so the scrape job. */}}
{{- define "deltasync.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The objects' name: the release name, or <release>-deltasync. */}}
{{- define "deltasync.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "deltasync.component" -}}
{{- if eq .Values.workload "statefulset" -}}sharded{{- else if eq .Values.workload "cronjob" -}}cronjob{{- else -}}daemon{{- end -}}
{{- end -}}

{{- define "deltasync.selectorLabels" -}}
app.kubernetes.io/name: {{ include "deltasync.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ include "deltasync.component" . }}
{{- end -}}

{{- define "deltasync.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "deltasync.selectorLabels" . }}
app.kubernetes.io/part-of: deltasync
app.kubernetes.io/version: {{ include "deltasync.tag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "deltasync.tag" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{- define "deltasync.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "deltasync.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: name the existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Values that cannot work fail the render, loudly, instead of deploying something else. */}}
{{- define "deltasync.validate" -}}
{{- if not (has .Values.workload (list "deployment" "statefulset" "cronjob")) -}}
{{- fail (printf "workload %q: want deployment, statefulset or cronjob" .Values.workload) -}}
{{- end -}}
{{- $r := .Values.replicas -}}
{{- if or (not (or (kindIs "float64" $r) (kindIs "int64" $r) (kindIs "int" $r))) (lt (float64 $r) 1.0) (ne (float64 (int $r)) (float64 $r)) -}}
{{- fail (printf "replicas %v: want a whole number >= 1" $r) -}}
{{- end -}}
{{- if and (ne .Values.workload "statefulset") (gt (int .Values.replicas) 1) -}}
{{- fail (printf "replicas %v with workload %s: two daemons would reconcile the same tables; use workload: statefulset to shard them" .Values.replicas .Values.workload) -}}
{{- end -}}
{{- if and (eq .Values.workload "cronjob") .Values.podMonitor.enabled -}}
{{- fail "podMonitor.enabled with workload cronjob: `once` serves no /metrics; set config.pushgateway.url instead" -}}
{{- end -}}
{{- if not .Values.token.existingSecret -}}
{{- fail "token.existingSecret: name the Secret holding the Unity Catalog token (kubectl create secret generic deltasync-token --from-file=token=./uc-token)" -}}
{{- end -}}
{{- if hasKey .Values.config "shard" -}}
{{- fail "config.shard: the chart sets --shard from replicas (workload: statefulset); remove it" -}}
{{- end -}}
{{- end -}}

{{/* The deltasync container; . is the root context, $daemon says run (true) or once. */}}
{{- define "deltasync.container" -}}
{{- $root := .root -}}
{{- $daemon := .daemon -}}
- name: deltasync
  image: "{{ $root.Values.image.repository }}:{{ include "deltasync.tag" $root }}"
  imagePullPolicy: {{ $root.Values.image.pullPolicy }}
  {{- if or (eq $root.Values.workload "statefulset") $root.Values.extraEnv }}
  env:
    {{- if eq $root.Values.workload "statefulset" }}
    # The StatefulSet controller labels each pod with its ordinal (the
    # number its name ends in; Kubernetes >= 1.28); $(POD_INDEX) expands to it.
    - name: POD_INDEX
      valueFrom:
        fieldRef:
          fieldPath: metadata.labels['apps.kubernetes.io/pod-index']
    - name: SHARD
      value: $(POD_INDEX)/{{ int $root.Values.replicas }}
    {{- end }}
    {{- with $root.Values.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
  args:
    - {{ ternary "run" "once" $daemon }}
    - --config=/etc/deltasync/config.yaml
    - --token-file=/var/run/secrets/deltasync/token
    {{- if $daemon }}
    - --listen=:{{ $root.Values.port }}
    {{- end }}
    {{- if eq $root.Values.workload "statefulset" }}
    - --shard=$(SHARD)
    {{- end }}
    {{- range $root.Values.extraArgs }}
    - {{ . | quote }}
    {{- end }}
  {{- if $daemon }}
  ports:
    - name: metrics
      containerPort: {{ $root.Values.port }}
      protocol: TCP
  startupProbe:
    httpGet:
      path: /healthz
      port: metrics
    periodSeconds: 2
    failureThreshold: 30
  livenessProbe:
    httpGet:
      path: /healthz
      port: metrics
    periodSeconds: 20
    timeoutSeconds: 5
    failureThreshold: 3
  readinessProbe:
    httpGet:
      path: /readyz
      port: metrics
    periodSeconds: 10
    timeoutSeconds: 5
    failureThreshold: 3
  {{- end }}
  resources:
    {{- toYaml (ternary $root.Values.resources $root.Values.cronjob.resources $daemon) | nindent 4 }}
  securityContext:
    {{- toYaml $root.Values.securityContext | nindent 4 }}
  volumeMounts:
    - name: config
      mountPath: /etc/deltasync
      readOnly: true
    - name: token
      mountPath: /var/run/secrets/deltasync
      readOnly: true
    - name: tmp
      mountPath: /tmp
{{- end -}}

{{/* The pod spec shared by every workload, less restartPolicy and the container. */}}
{{- define "deltasync.podSpec" -}}
serviceAccountName: {{ include "deltasync.serviceAccountName" . }}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  - name: config
    configMap:
      name: {{ include "deltasync.fullname" . }}-config
  - name: token
    secret:
      secretName: {{ .Values.token.existingSecret }}
      defaultMode: 0440
      {{- if ne .Values.token.key "token" }}
      items:
        - key: {{ .Values.token.key }}
          path: token
      {{- end }}
  - name: tmp
    emptyDir:
      sizeLimit: 64Mi
{{- end -}}

{{/* Pod template metadata: labels, and the config checksum that rolls the pods. */}}
{{- define "deltasync.podMetadata" -}}
labels:
  {{- include "deltasync.selectorLabels" . | nindent 2 }}
  {{- with .Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
annotations:
  checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
  {{- if ne .Values.workload "cronjob" }}
  prometheus.io/scrape: "true"
  prometheus.io/port: {{ .Values.port | quote }}
  prometheus.io/path: /metrics
  {{- end }}
  {{- with .Values.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}
