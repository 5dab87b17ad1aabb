{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "redfish-bridge.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: the release name, suffixed with the chart name unless it already holds it. */}}
{{- define "redfish-bridge.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "redfish-bridge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "redfish-bridge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "redfish-bridge.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "redfish-bridge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: redfish-bridge
{{- end }}

{{- define "redfish-bridge.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "redfish-bridge.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "redfish-bridge.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "redfish-bridge.usersSecret" -}}
{{- default (printf "%s-users" (include "redfish-bridge.fullname" .)) .Values.users.existingSecret }}
{{- end }}

{{- define "redfish-bridge.sessionKeySecret" -}}
{{- default (printf "%s-session-key" (include "redfish-bridge.fullname" .)) .Values.sessionKey.existingSecret }}
{{- end }}

{{- define "redfish-bridge.imageCacheKeySecret" -}}
{{- default (printf "%s-image-cache-key" (include "redfish-bridge.fullname" .)) .Values.imageCache.existingKeySecret }}
{{- end }}

{{/* Where the bridge reads the image cache key (serve --image-cache-key-file). */}}
{{- define "redfish-bridge.imageCacheKeyDir" -}}
/etc/redfish-bridge/image-cache-key
{{- end }}

{{- define "redfish-bridge.sessionsConfigMap" -}}
{{- printf "%s-sessions" (include "redfish-bridge.fullname" .) }}
{{- end }}

{{- define "redfish-bridge.eventsSecret" -}}
{{- printf "%s-events" (include "redfish-bridge.fullname" .) }}
{{- end }}

{{- define "redfish-bridge.leaseName" -}}
{{- default (include "redfish-bridge.fullname" .) .Values.leaderElection.leaseName }}
{{- end }}

{{- define "redfish-bridge.tlsSecret" -}}
{{- default (printf "%s-tls" (include "redfish-bridge.fullname" .)) .Values.tls.existingSecret }}
{{- end }}

{{/*
Service root UUID: the value given, else a name-based UUID (version 5 and
RFC 4122 variant bits) from the SHA-256 of "<namespace>/<release>", so every
replica and every upgrade serves the same one.
*/}}
{{- define "redfish-bridge.serviceUUID" -}}
{{- if .Values.serviceUUID }}
{{- .Values.serviceUUID }}
{{- else }}
{{- $h := sha256sum (printf "redfish-bridge/%s/%s" .Release.Namespace .Release.Name) }}
{{- printf "%s-%s-5%s-8%s-%s" (substr 0 8 $h) (substr 8 12 $h) (substr 13 16 $h) (substr 17 20 $h) (substr 20 32 $h) }}
{{- end }}
{{- end }}

{{/* Fails the render on contradictory values. */}}
{{- define "redfish-bridge.validate" -}}
{{- if and .Values.tls.existingSecret .Values.tls.certManager.enabled }}
{{- fail "set only one of tls.existingSecret and tls.certManager.enabled" }}
{{- end }}
{{- if and .Values.tls.certManager.enabled (not .Values.tls.certManager.issuerRef.name) }}
{{- fail "tls.certManager.issuerRef.name is required with tls.certManager.enabled" }}
{{- end }}
{{- if and .Values.users.existingSecret .Values.users.list }}
{{- fail "set only one of users.existingSecret and users.list" }}
{{- end }}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail (printf "replicaCount %d needs leaderElection.enabled: without the Lease every replica runs the reconcilers (imports, held power-ons, Once reverts)" (int .Values.replicaCount)) }}
{{- end }}
{{- end }}

{{/* True (non-empty) when the chart generates a self-signed serving certificate. */}}
{{- define "redfish-bridge.selfSigned" -}}
{{- if not (or .Values.insecureHTTP .Values.tls.existingSecret .Values.tls.certManager.enabled) }}true{{ end }}
{{- end }}

{{/*
VirtualMachine-side rules: what the bridge does in every namespace it
serves. Server-Side Apply is a PATCH; VMs are never created or updated.
*/}}
{{- define "redfish-bridge.workloadRules" -}}
# Inventory informers, precondition reads and Server-Side Apply of VMs.
- apiGroups: ["kubevirt.io"]
  resources: ["virtualmachines"]
  verbs: ["get", "list", "watch", "patch"]
# Start, stop and restart requests (status.stateChangeRequests, applied
# under redfish-power the way virt-api's start and restart write them).
- apiGroups: ["kubevirt.io"]
  resources: ["virtualmachines/status"]
  verbs: ["patch"]
# Power state (read only: virt-controller deletes and creates VMIs).
- apiGroups: ["kubevirt.io"]
  resources: ["virtualmachineinstances"]
  verbs: ["get", "list", "watch"]
# ForceOff and ForceRestart: virt-api's stop and restart (grace period 0),
# the only way to shorten a running guest's terminationGracePeriodSeconds.
- apiGroups: ["subresources.kubevirt.io"]
  resources: ["virtualmachines/stop", "virtualmachines/restart"]
  verbs: ["update"]
# Serial console (IPMI SOL, SSH): virt-api's console WebSocket.
- apiGroups: ["subresources.kubevirt.io"]
  resources: ["virtualmachineinstances/console"]
  verbs: ["get"]
# Graphical console (the /console/ page): virt-api's vnc WebSocket; and
# the Systems page's thumbnails: virt-api's vnc/screenshot. kube-apiserver
# authorizes a screenshot as vnc, then virt-api asks again for
# vnc/screenshot itself (a SubjectAccessReview; denied, it answers 401).
- apiGroups: ["subresources.kubevirt.io"]
  resources: ["virtualmachineinstances/vnc", "virtualmachineinstances/vnc/screenshot"]
  verbs: ["get"]
# ISO import: a PVC per medium ...
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["create", "list", "watch", "delete"]
# ... and a helper pod that fills it (looked up before a re-create).
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["create", "get", "list", "watch", "delete"]
# ... whose log (served by the node's kubelet) tells the import's progress:
# the Task's PercentComplete (the pod has no API credentials to say it).
- apiGroups: [""]
  resources: ["pods/log"]
  verbs: ["get"]
# ... or, where CDI is installed, a DataVolume that fills it (looked up
# before a re-create; harmless where CDI is not installed).
- apiGroups: ["cdi.kubevirt.io"]
  resources: ["datavolumes"]
  verbs: ["create", "get", "list", "watch", "delete"]
# The import Secret of an insert (its credentials), created and deleted by
# name, never read, listed or watched.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["create", "delete"]
# A slot's trust (VerifyCertificate and Certificates): listed and watched
# (by label: the bridge's own) for GETs, read by name and written back with
# its resourceVersion; the import ConfigMap of an insert (its CAs), created
# and deleted.
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# Events on VMs the media reconciler healed.
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
{{- end }}

{{/* The bridge ServiceAccount as an RBAC subject list. */}}
{{- define "redfish-bridge.subjects" -}}
- kind: ServiceAccount
  name: {{ include "redfish-bridge.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}

{{/* The Secret holding the SSH console's host key (key ssh_host_key). */}}
{{- define "redfish-bridge.sshHostKeySecret" -}}
{{- default (printf "%s-ssh-host-key" (include "redfish-bridge.fullname" .)) .Values.sshConsole.hostKeySecret }}
{{- end }}
