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
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
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

{{- define "grove-sharing-webhook.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
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
The Secret holding tls.crt and tls.key, mounted into the webhook container.
*/}}
{{- define "grove-sharing-webhook.tlsSecretName" -}}
{{- if eq .Values.certificates.mode "existingSecret" }}
{{- required "certificates.existingSecret.name is required in existingSecret mode" .Values.certificates.existingSecret.name }}
{{- else }}
{{- printf "%s-tls" (include "grove-sharing-webhook.fullname" .) }}
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
cert-manager CA-injection annotation, or a caBundle.
*/}}
{{- define "grove-sharing-webhook.caInjectionAnnotation" -}}
{{- if eq .Values.certificates.mode "certManager" }}
cert-manager.io/inject-ca-from: {{ printf "%s/%s" .Release.Namespace (include "grove-sharing-webhook.tlsSecretName" .) }}
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
The expression of every webhook's namespaceSelector: the release namespace and kube-system are
never sent to the webhooks, which must not be able to block their own pods or the control plane.
*/}}
{{- define "grove-sharing-webhook.excludedNamespaces" -}}
{{- toJson (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" (list .Release.Namespace "kube-system" | uniq)) }}
{{- end }}
