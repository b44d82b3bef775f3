{{/* names */}}
{{- define "sf2loki.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "sf2loki.fullname" -}}
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

{{- define "sf2loki.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sf2loki.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "sf2loki.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "sf2loki.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* the service account: never the namespace's "default" by accident (SFL-0070) */}}
{{- define "sf2loki.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "sf2loki.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false (RBAC would otherwise bind the namespace's default service account)" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* the coordinator the config selects; ha.enabled forces k8s_lease */}}
{{- define "sf2loki.coordinator" -}}
{{- if .Values.ha.enabled -}}k8s_lease{{- else -}}{{ .Values.config.coordinate.type | default "noop" }}{{- end -}}
{{- end -}}

{{/* the rendered config: the values' config with the HA coordinator filled in */}}
{{- define "sf2loki.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- if .Values.ha.enabled -}}
{{- $coordinate := get $config "coordinate" | default dict -}}
{{- $lease := get $coordinate "k8s_lease" | default dict -}}
{{- $_ := set $lease "name" .Values.ha.leaseName -}}
{{- $_ := set $coordinate "k8s_lease" $lease -}}
{{- $_ := set $coordinate "type" "k8s_lease" -}}
{{- $_ := set $config "coordinate" $coordinate -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{- define "sf2loki.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* guards that make a wrong topology fail at render time */}}
{{- define "sf2loki.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.ha.enabled) -}}
{{- fail "replicaCount > 1 needs ha.enabled: true (replicas without a coordinator would all ingest)" -}}
{{- end -}}
{{- if and .Values.ha.enabled .Values.config.coordinate.k8s_lease.name (ne .Values.config.coordinate.k8s_lease.name .Values.ha.leaseName) -}}
{{- fail "config.coordinate.k8s_lease.name must equal ha.leaseName (the Role grants only that Lease)" -}}
{{- end -}}
{{- if and .Values.ha.enabled (eq (.Values.config.state.store | default "file") "file") (not .Values.stateVolume) -}}
{{- fail "ha.enabled with state.store: file needs stateVolume (one ReadWriteMany volume shared by every replica); a per-pod emptyDir would give each replica its own checkpoints. Prefer state.store s3 or gcs" -}}
{{- end -}}
{{- end -}}
