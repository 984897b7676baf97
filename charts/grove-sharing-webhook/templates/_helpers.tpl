{{/*
The chart name, shortened to 63 characters (a label value's limit).
*/}}
{{- define "grove-sharing-webhook.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The name of every namespaced object of the release and of the cluster-scoped ones. The release
name alone when it already contains the chart name, so "helm install grove-sharing-webhook" does
not produce "grove-sharing-webhook-grove-sharing-webhook".
*/}}
{{- define "grove-sharing-webhook.fullname" -}}
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

{{- define "grove-sharing-webhook.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "grove-sharing-webhook.labels" -}}
helm.sh/chart: {{ include "grove-sharing-webhook.chart" . }}
{{ include "grove-sharing-webhook.selectorLabels" . }}
{{ include "grove-sharing-webhook.commonLabels" . }}
{{- end }}

{{/*
The labels every object has beyond its selector labels: the version, the manager, and commonLabels.
*/}}
{{- define "grove-sharing-webhook.commonLabels" -}}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The reconciler's Deployment (reconciler.mode deployment) and what belongs to it. Its pods are named
apart (app.kubernetes.io/name <name>-reconciler), so that neither the webhook's Deployment, Service
and PodDisruptionBudget select them nor the reconciler's select the webhook's pods.
*/}}
{{- define "grove-sharing-webhook.reconcilerFullname" -}}
{{- printf "%s-reconciler" (include "grove-sharing-webhook.fullname" . | trunc 52 | trimSuffix "-") }}
{{- end }}

{{- define "grove-sharing-webhook.reconcilerSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-reconciler" (include "grove-sharing-webhook.name" . | trunc 52 | trimSuffix "-") }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: reconciler
{{- end }}

{{- define "grove-sharing-webhook.reconcilerLabels" -}}
helm.sh/chart: {{ include "grove-sharing-webhook.chart" . }}
{{ include "grove-sharing-webhook.reconcilerSelectorLabels" . }}
{{ include "grove-sharing-webhook.commonLabels" . }}
{{- end }}

{{- define "grove-sharing-webhook.reconcilerDeployed" -}}
{{- if and .Values.reconciler.enabled (eq .Values.reconciler.mode "deployment") (not .Values.webhooks.url) }}true{{ end }}
{{- end }}

{{/*
The reconciler's ServiceAccount: its own in deployment mode, the webhook's as a sidecar.
*/}}
{{- define "grove-sharing-webhook.reconcilerServiceAccountName" -}}
{{- if eq .Values.reconciler.mode "deployment" }}
{{- if .Values.reconciler.serviceAccount.create }}
{{- default (include "grove-sharing-webhook.reconcilerFullname" .) .Values.reconciler.serviceAccount.name }}
{{- else }}
{{- required "reconciler.serviceAccount.name is required when reconciler.serviceAccount.create is false" .Values.reconciler.serviceAccount.name }}
{{- end }}
{{- else }}
{{- include "grove-sharing-webhook.serviceAccountName" . }}
{{- end }}
{{- end }}

{{- define "grove-sharing-webhook.selectorLabels" -}}
app.kubernetes.io/name: {{ include "grove-sharing-webhook.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "grove-sharing-webhook.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "grove-sharing-webhook.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
registry/repository:tag@digest: the registry from image.registry or global.imageRegistry, the tag
the chart's appVersion unless given, the digest when given.
*/}}
{{- define "grove-sharing-webhook.image" -}}
{{- $registry := .Values.image.registry | default (get (.Values.global | default dict) "imageRegistry") }}
{{- $image := printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- if $registry }}
{{- $image = printf "%s/%s" (trimSuffix "/" $registry) $image }}
{{- end }}
{{- if .Values.image.digest }}
{{- $image = printf "%s@%s" $image .Values.image.digest }}
{{- end }}
{{- $image }}
{{- end }}

{{/*
A probe: the chart's, with the user's keys merged over it. Called with (list <chart's> <user's>).
*/}}
{{- define "grove-sharing-webhook.probe" -}}
{{- toYaml (mergeOverwrite (deepCopy (index . 0)) (index . 1 | default dict)) }}
{{- end }}

{{/*
The DNS name the API server calls the webhooks at; the serving certificate must be valid for it.
*/}}
{{- define "grove-sharing-webhook.serviceHost" -}}
{{- printf "%s.%s.svc" (include "grove-sharing-webhook.fullname" .) .Release.Namespace }}
{{- end }}

{{- define "grove-sharing-webhook.dnsNames" -}}
{{- $service := include "grove-sharing-webhook.fullname" . }}
{{- $names := list $service (printf "%s.%s" $service .Release.Namespace) (include "grove-sharing-webhook.serviceHost" .) (printf "%s.cluster.local" (include "grove-sharing-webhook.serviceHost" .)) }}
{{- with include "grove-sharing-webhook.urlHost" . }}
{{- if not (regexMatch "^[0-9.]+$|:" .) }}
{{- $names = append $names . }}
{{- end }}
{{- end }}
{{- $names | toJson }}
{{- end }}

{{/*
The IP addresses the serving certificate must be valid for: the host of webhooks.url when it is one.
*/}}
{{- define "grove-sharing-webhook.ipAddresses" -}}
{{- $ips := list }}
{{- with include "grove-sharing-webhook.urlHost" . }}
{{- if regexMatch "^[0-9.]+$|:" . }}
{{- $ips = append $ips . }}
{{- end }}
{{- end }}
{{- $ips | toJson }}
{{- end }}

{{/*
The host name or IP address of webhooks.url, without port or IPv6 brackets; empty when not set.
*/}}
{{- define "grove-sharing-webhook.urlHost" -}}
{{- with .Values.webhooks.url }}
{{- (urlParse .).hostname }}
{{- end }}
{{- end }}

{{/*
The Secret holding tls.crt and tls.key: kept by the webhook itself in controller mode (named apart
from the other modes' kubernetes.io/tls Secret, whose type an Opaque one could not replace in an
upgrade), mounted into the webhook container in the others.
*/}}
{{- define "grove-sharing-webhook.tlsSecretName" -}}
{{- if eq .Values.certificates.mode "existingSecret" }}
{{- required "certificates.existingSecret.name is required in existingSecret mode" .Values.certificates.existingSecret.name }}
{{- else if eq .Values.certificates.mode "controller" }}
{{- printf "%s-certificate" (include "grove-sharing-webhook.fullname" . | trunc 51 | trimSuffix "-") }}
{{- else }}
{{- printf "%s-tls" (include "grove-sharing-webhook.fullname" .) }}
{{- end }}
{{- end }}

{{/*
Every name and address the serving certificate covers, comma-separated, for the controller.
*/}}
{{- define "grove-sharing-webhook.certificateHosts" -}}
{{- concat (include "grove-sharing-webhook.dnsNames" . | fromJsonArray) (include "grove-sharing-webhook.ipAddresses" . | fromJsonArray) | join "," }}
{{- end }}

{{/*
The tlsConfig a ServiceMonitor or PodMonitor scrapes the webhook's /metrics with: the user's, or
verified with the CA of the certificate mode and the Service's name the certificate covers.
Called with (list $ <tlsConfig from values>).
*/}}
{{- define "grove-sharing-webhook.metricsTLSConfig" -}}
{{- $root := index . 0 }}
{{- if index . 1 }}
{{- toYaml (index . 1) }}
{{- else }}
serverName: {{ include "grove-sharing-webhook.serviceHost" $root }}
ca:
  {{- if eq $root.Values.certificates.mode "existingSecret" }}
  configMap:
    name: {{ include "grove-sharing-webhook.fullname" $root }}-ca
    key: ca.crt
  {{- else }}
  secret:
    name: {{ include "grove-sharing-webhook.tlsSecretName" $root }}
    key: ca.crt
  {{- end }}
{{- end }}
{{- end }}

{{/*
The self-signed CA and serving certificate, as a dict of base64 PEM strings (ca.crt, tls.crt,
tls.key). An existing Secret of the release is reused, so an upgrade neither rotates the CA nor
briefly serves a certificate the webhook configurations do not trust. Generated once per render
and remembered on the root context, because the Secret and both webhook configurations must carry
the same CA and each template would otherwise generate its own.
*/}}
{{- define "grove-sharing-webhook.selfSignedTLS" -}}
{{- if not (hasKey $ "groveSharingWebhookTLS") }}
{{- $secret := lookup "v1" "Secret" .Release.Namespace (include "grove-sharing-webhook.tlsSecretName" .) }}
{{- $stored := get $secret "data" | default dict }}
{{- $data := dict }}
{{- if and (get $stored "ca.crt") (get $stored "tls.crt") (get $stored "tls.key") }}
{{- $data = dict "ca.crt" (get $stored "ca.crt") "tls.crt" (get $stored "tls.crt") "tls.key" (get $stored "tls.key") }}
{{- else }}
{{- $days := int .Values.certificates.selfSigned.validityDays }}
{{- /* ECDSA P-256: a new TLS connection costs about half of an RSA-2048 handshake. */}}
{{- $ca := genCAWithKey (printf "%s-ca" (include "grove-sharing-webhook.fullname" .)) $days (genPrivateKey "ecdsa") }}
{{- $host := include "grove-sharing-webhook.serviceHost" . }}
{{- $cert := genSignedCertWithKey $host (include "grove-sharing-webhook.ipAddresses" . | fromJsonArray) (include "grove-sharing-webhook.dnsNames" . | fromJsonArray) $days $ca (genPrivateKey "ecdsa") }}
{{- $data = dict "ca.crt" ($ca.Cert | b64enc) "tls.crt" ($cert.Cert | b64enc) "tls.key" ($cert.Key | b64enc) }}
{{- end }}
{{- $_ := set $ "groveSharingWebhookTLS" $data }}
{{- end }}
{{- toJson (get $ "groveSharingWebhookTLS") }}
{{- end }}

{{/*
What the webhook configurations need so the API server trusts the serving certificate: the
cert-manager CA-injection annotation, or a caBundle (none in controller mode: the webhook writes it,
and since no manifest has it, Helm's and Argo CD's three-way merges leave it alone).
*/}}
{{- define "grove-sharing-webhook.webhookAnnotations" -}}
{{- $annotations := deepCopy .Values.webhooks.annotations }}
{{- if eq .Values.certificates.mode "certManager" }}
{{- $_ := set $annotations "cert-manager.io/inject-ca-from" (printf "%s/%s" .Release.Namespace (include "grove-sharing-webhook.tlsSecretName" .)) }}
{{- end }}
{{- with $annotations }}
{{- toYaml . }}
{{- end }}
{{- end }}

{{- define "grove-sharing-webhook.caBundle" -}}
{{- if eq .Values.certificates.mode "selfSigned" }}
{{- index (include "grove-sharing-webhook.selfSignedTLS" . | fromJson) "ca.crt" }}
{{- else if eq .Values.certificates.mode "existingSecret" }}
{{- required "certificates.existingSecret.caBundle is required in existingSecret mode" .Values.certificates.existingSecret.caBundle }}
{{- end }}
{{- end }}

{{/*
A webhook's clientConfig: the Service and the path (or the URL of a server outside the cluster)
and, unless cert-manager injects it, the CA.
Called with (list $ "/path").
*/}}
{{- define "grove-sharing-webhook.clientConfig" -}}
{{- $root := index . 0 }}
{{- if $root.Values.webhooks.url }}
url: {{ printf "%s%s" (trimSuffix "/" $root.Values.webhooks.url) (index . 1) | quote }}
{{- else }}
service:
  name: {{ include "grove-sharing-webhook.fullname" $root }}
  namespace: {{ $root.Release.Namespace }}
  path: {{ index . 1 }}
  port: {{ $root.Values.service.port }}
{{- end }}
{{- with include "grove-sharing-webhook.caBundle" $root }}
caBundle: {{ . }}
{{- end }}
{{- end }}

{{/*
A label selector that always holds the chart's own expression, narrowed by the user's selector
from values (their matchLabels and matchExpressions are added, never replace it). Called with
(list <expression> <selector from values>). The user's selector may have either key or neither, so
they are read with get: a field read of a missing key fails under missingkey=error.
*/}}
{{- define "grove-sharing-webhook.selector" -}}
{{- $user := index . 1 | default dict }}
{{- $selector := dict "matchExpressions" (prepend (get $user "matchExpressions" | default list) (index . 0)) }}
{{- with get $user "matchLabels" }}
{{- $_ := set $selector "matchLabels" . }}
{{- end }}
{{- toYaml $selector }}
{{- end }}

{{/*
One component's RBAC, from the same rules as its access table in webhook/kube/access.py: a
ClusterRole of its cluster rules (its workload rules too when it watches every namespace), a Role
of its workload rules in each namespace it watches, a Role of its own-namespace rules, each bound
to its ServiceAccount. Called with a dict: root, component, serviceAccount, cluster, workload, own
(lists of rules) and namespaces (empty: all namespaces).
*/}}
{{- define "grove-sharing-webhook.rbac" -}}
{{- $root := .root }}
{{- $workload := .workload }}
{{- $serviceAccount := .serviceAccount }}
{{- $name := printf "%s-%s" (include "grove-sharing-webhook.fullname" $root) .component }}
{{- $cluster := .cluster }}
{{- if not .namespaces }}
{{- $cluster = concat .cluster .workload }}
{{- end }}
{{- $roles := list }}
{{- if $cluster }}
{{- $roles = append $roles (dict "kind" "ClusterRole" "name" $name "rules" $cluster) }}
{{- end }}
{{- if .namespaces }}
{{- range .namespaces }}
{{- $roles = append $roles (dict "kind" "Role" "name" (printf "%s-workloads" $name) "namespace" . "rules" $workload) }}
{{- end }}
{{- end }}
{{- if .own }}
{{- $roles = append $roles (dict "kind" "Role" "name" $name "namespace" $root.Release.Namespace "rules" .own) }}
{{- end }}
{{- range $roles }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ .kind }}
metadata:
  name: {{ .name }}
  {{- with .namespace }}
  namespace: {{ . }}
  {{- end }}
  labels:
    {{- include "grove-sharing-webhook.labels" $root | nindent 4 }}
rules:
  {{- toYaml .rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ .kind }}Binding
metadata:
  name: {{ .name }}
  {{- with .namespace }}
  namespace: {{ . }}
  {{- end }}
  labels:
    {{- include "grove-sharing-webhook.labels" $root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: {{ .kind }}
  name: {{ .name }}
subjects:
  - kind: ServiceAccount
    name: {{ $serviceAccount }}
    namespace: {{ $root.Release.Namespace }}
{{- end }}
{{- end }}

{{/*
The expression of every webhook's namespaceSelector: the release namespace and kube-system are
never sent to the webhooks, which must not be able to block their own pods or the control plane.
*/}}
{{- define "grove-sharing-webhook.excludedNamespaces" -}}
{{- toJson (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" (list .Release.Namespace "kube-system" | uniq)) }}
{{- end }}

{{/*
The reconciler's liveness probe, as a sidecar and in its own Deployment.
*/}}
{{- define "grove-sharing-webhook.reconcilerLivenessProbe" -}}
{{- include "grove-sharing-webhook.probe" (list (dict "httpGet" (dict "path" "/healthz" "port" "reconciler") "initialDelaySeconds" 5 "periodSeconds" 10 "failureThreshold" 3) .Values.reconciler.livenessProbe) }}
{{- end }}

{{/*
The reconciler container's environment: its options, as a sidecar and in its own Deployment.
*/}}
{{- define "grove-sharing-webhook.reconcilerEnv" -}}
- name: WEBHOOK_LEADER_ELECT
  value: {{ .Values.reconciler.leaderElect | quote }}
- name: WEBHOOK_LEADER_ELECTION_ID
  value: {{ include "grove-sharing-webhook.fullname" . }}-reconciler
- name: WEBHOOK_HEALTH_HOST
  value: "0.0.0.0"
- name: WEBHOOK_HEALTH_PORT
  value: {{ .Values.reconciler.healthPort | quote }}
- name: WEBHOOK_CLAIMS
  value: {{ .Values.reconciler.claims | quote }}
- name: WEBHOOK_RESYNC_PERIOD
  value: {{ .Values.reconciler.resyncPeriod | quote }}
- name: WEBHOOK_WORKERS
  value: {{ .Values.reconciler.workers | quote }}
- name: WEBHOOK_MAX_CLAIMS_PER_OWNER
  value: {{ .Values.reconciler.maxClaimsPerOwner | quote }}
- name: WEBHOOK_LOG_LEVEL
  value: {{ .Values.reconciler.logLevel | quote }}
- name: WEBHOOK_LOG_FORMAT
  value: {{ .Values.reconciler.logFormat | quote }}
{{- with .Values.reconciler.namespaces }}
- name: WEBHOOK_NAMESPACE
  value: {{ join "," . | quote }}
{{- end }}
{{- with .Values.reconciler.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
A PodDisruptionBudget's minAvailable, or maxUnavailable when it is set. Called with the values of
podDisruptionBudget or reconciler.podDisruptionBudget.
*/}}
{{- define "grove-sharing-webhook.disruptionBudget" -}}
{{- if not (kindIs "invalid" .maxUnavailable) }}
maxUnavailable: {{ .maxUnavailable }}
{{- else }}
minAvailable: {{ .minAvailable }}
{{- end }}
{{- end }}

{{/*
What a ServiceMonitor or PodMonitor selects: the release's webhook and, in deployment mode, its
reconciler (each endpoint is taken only where its port is).
*/}}
{{- define "grove-sharing-webhook.monitorSelector" -}}
namespaceSelector:
  matchNames:
    - {{ .Release.Namespace }}
selector:
  matchLabels:
    app.kubernetes.io/instance: {{ .Release.Name }}
  matchExpressions:
    - key: app.kubernetes.io/name
      operator: In
      values:
        - {{ include "grove-sharing-webhook.name" . }}
        {{- if include "grove-sharing-webhook.reconcilerDeployed" . }}
        - {{ printf "%s-reconciler" (include "grove-sharing-webhook.name" . | trunc 52 | trimSuffix "-") }}
        {{- end }}
{{- end }}

{{/*
A pre-delete hook object's annotations, with its weight: made afresh at every uninstall, and
deleted once the hook has succeeded.
*/}}
{{- define "grove-sharing-webhook.hookAnnotations" -}}
helm.sh/hook: pre-delete
helm.sh/hook-weight: {{ . | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end }}
