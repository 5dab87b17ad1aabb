{{/* The --config YAML: flag names as keys. */}}
{{- define "redfish-bridge.config" -}}
{{- $cfg := dict
  "namespaces" (join "," .Values.watchNamespaces)
  "users-secret" (include "redfish-bridge.usersSecret" .)
  "session-key-secret" (include "redfish-bridge.sessionKeySecret" .)
  "sessions-configmap" (include "redfish-bridge.sessionsConfigMap" .)
  "event-subscriptions-secret" (include "redfish-bridge.eventsSecret" .)
  "listen" ":8443"
  "metrics-listen" (printf ":%d" (int .Values.service.metricsPort))
  "service-uuid" (include "redfish-bridge.serviceUUID" .)
  "importer-image" (default (include "redfish-bridge.image" .) .Values.importerImage)
  "storage-class" .Values.storageClass
  "max-image-size" .Values.maxImageSize
  "image-claim-size" .Values.imageClaimSize
  "leader-elect" .Values.leaderElection.enabled
  "lease-name" (include "redfish-bridge.leaseName" .)
}}
{{- if .Values.imageCache.enabled }}
{{- $_ := set $cfg "image-cache" true }}
{{- $_ := set $cfg "image-cache-size" (toString .Values.imageCache.size) }}
{{- $_ := set $cfg "image-cache-key-file" (printf "%s/image-cache-key" (include "redfish-bridge.imageCacheKeyDir" .)) }}
{{- end }}
{{- if .Values.ipmi.enabled }}
{{- $_ := set $cfg "ipmi-first-port" (int .Values.ipmi.firstPort) }}
{{- $_ := set $cfg "ipmi-last-port" (int .Values.ipmi.lastPort) }}
{{- end }}
{{- if .Values.sshConsole.enabled }}
{{- $_ := set $cfg "ssh-console-listen" (printf ":%d" (int .Values.sshConsole.port)) }}
{{- $_ := set $cfg "ssh-console-host-key" "/etc/redfish-bridge/ssh/ssh_host_key" }}
{{- end }}
{{- with .Values.imageCA.configMap }}
{{- $_ := set $cfg "image-ca-configmap" . }}
{{- $_ := set $cfg "image-ca-key" $.Values.imageCA.key }}
{{- end }}
{{- if .Values.insecureHTTP }}
{{- $_ := set $cfg "insecure-http" true }}
{{- else }}
{{- $_ := set $cfg "tls-cert" "/etc/redfish-bridge/tls/tls.crt" }}
{{- $_ := set $cfg "tls-key" "/etc/redfish-bridge/tls/tls.key" }}
{{- end }}
{{- /* CDI's importer pods check no address policy: CDI imports only
where the chart's NetworkPolicy covers them (docs/images.md, "CDI and
the address policy"); serving every namespace it cannot, so the bridge
imports with its own pod. */}}
{{- if and .Values.cdiImporterNetworkPolicy.enabled (not .Values.watchNamespaces) }}
{{- $method := index .Values.extraConfig "import-method" | default "pod" }}
{{- if ne $method "pod" }}
{{- fail (printf "extraConfig.import-method %s needs watchNamespaces while cdiImporterNetworkPolicy.enabled: the NetworkPolicy that keeps CDI's importer pods from the metadata service applies to one namespace (set cdiImporterNetworkPolicy.enabled=false to let CDI import without it)" $method) }}
{{- end }}
{{- $_ := set $cfg "import-method" "pod" }}
{{- end }}
{{- toYaml (mergeOverwrite $cfg .Values.extraConfig) }}
{{- end }}
