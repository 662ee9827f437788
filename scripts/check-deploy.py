#!/usr/bin/python3
"""check-deploy.py - check deploy/*.yaml offline, against a schema of the
Kubernetes fields the manifests use and against memtrace itself.

No Kubernetes schema validator (kubeconform, kubeval) is packaged by Debian,
and none can be fetched here, so this is a schema of our own for what
matters, from the Kubernetes API reference (v1.30):
  - every key of every object is a field of its type (a typo such as
    `hostPid` or `readonly` fails), and values have the field's type;
  - apiVersion/kind pairs exist; names are DNS-1123;
  - selectors match their template's labels; a Service selects the
    DaemonSet's pods and targets a port its container declares;
  - memtrace's containers: the capabilities are exactly docs/serve.md's table
    (after drop ALL), not privileged, volume mounts name declared volumes,
    secrets and host paths mounted read-only, requests set, the listen port
    equals the container port and the prometheus.io/port annotation, and
    every option in args is one `memtrace serve --help` names.
Usage: scripts/check-deploy.py MEMTRACE [deploy/*.yaml]; prints one line per
problem and exits 1 if any.
"""
import glob
import os
import re
import subprocess
import sys

import yaml

S, I, B, D, L = str, int, bool, dict, list
INTSTR = (int, str)

# type name -> {field: type}; a type is a Python type, a tuple of them, the
# name of another entry, or ["entry"] for a list of entries.
SCHEMA = {
    "ObjectMeta": {"name": S, "namespace": S, "labels": "StrMap", "annotations": "StrMap"},
    "StrMap": None,  # any string -> string
    "LabelSelector": {"matchLabels": "StrMap"},
    "Namespace": {"apiVersion": S, "kind": S, "metadata": "ObjectMeta"},
    "DaemonSet": {"apiVersion": S, "kind": S, "metadata": "ObjectMeta", "spec": "DaemonSetSpec"},
    "DaemonSetSpec": {"selector": "LabelSelector", "template": "PodTemplateSpec",
                      "updateStrategy": "DSStrategy", "minReadySeconds": I},
    "DSStrategy": {"type": S, "rollingUpdate": D},
    "Deployment": {"apiVersion": S, "kind": S, "metadata": "ObjectMeta", "spec": "DeploymentSpec"},
    "DeploymentSpec": {"replicas": I, "selector": "LabelSelector", "template": "PodTemplateSpec",
                       "strategy": D},
    "PodTemplateSpec": {"metadata": "ObjectMeta", "spec": "PodSpec"},
    "PodSpec": {"hostPID": B, "hostNetwork": B, "shareProcessNamespace": B,
                "automountServiceAccountToken": B, "serviceAccountName": S,
                "terminationGracePeriodSeconds": I, "tolerations": ["Toleration"],
                "nodeSelector": "StrMap", "priorityClassName": S,
                "containers": ["Container"], "volumes": ["Volume"],
                "securityContext": "PodSecurityContext"},
    "PodSecurityContext": {"runAsUser": I, "runAsGroup": I, "runAsNonRoot": B, "fsGroup": I},
    "Toleration": {"key": S, "operator": S, "value": S, "effect": S},
    "Container": {"name": S, "image": S, "command": [S], "args": [S], "ports": ["ContainerPort"],
                  "env": ["EnvVar"], "securityContext": "SecurityContext",
                  "resources": "Resources", "volumeMounts": ["VolumeMount"],
                  "livenessProbe": "Probe", "readinessProbe": "Probe", "imagePullPolicy": S},
    "EnvVar": {"name": S, "value": S, "valueFrom": D},
    "ContainerPort": {"name": S, "containerPort": I, "protocol": S, "hostPort": I},
    "SecurityContext": {"privileged": B, "runAsUser": I, "runAsGroup": I, "runAsNonRoot": B,
                        "readOnlyRootFilesystem": B, "allowPrivilegeEscalation": B,
                        "capabilities": "Capabilities", "seccompProfile": D},
    "Capabilities": {"add": [S], "drop": [S]},
    "Resources": {"requests": "Quantities", "limits": "Quantities"},
    "Quantities": {"cpu": INTSTR, "memory": S, "ephemeral-storage": S},
    "Probe": {"httpGet": "HTTPGet", "initialDelaySeconds": I, "periodSeconds": I,
              "timeoutSeconds": I, "failureThreshold": I},
    "HTTPGet": {"path": S, "port": INTSTR, "scheme": S},
    "VolumeMount": {"name": S, "mountPath": S, "readOnly": B, "subPath": S},
    "Volume": {"name": S, "secret": "SecretVolume", "hostPath": "HostPath",
               "emptyDir": "EmptyDir", "configMap": D},
    "SecretVolume": {"secretName": S, "defaultMode": I, "optional": B},
    "HostPath": {"path": S, "type": S},
    "EmptyDir": {"medium": S, "sizeLimit": S},
    "Service": {"apiVersion": S, "kind": S, "metadata": "ObjectMeta", "spec": "ServiceSpec"},
    "ServiceSpec": {"clusterIP": S, "type": S, "selector": "StrMap", "ports": ["ServicePort"]},
    "ServicePort": {"name": S, "port": I, "targetPort": INTSTR, "protocol": S},
}
KINDS = {("v1", "Namespace"), ("v1", "Service"), ("apps/v1", "DaemonSet"),
         ("apps/v1", "Deployment")}
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

problems = []


def bad(where, msg):
    problems.append("%s: %s" % (where, msg))


def check_type(where, value, t):
    if isinstance(t, list):
        if not isinstance(value, list):
            return bad(where, "expected a list")
        for i, v in enumerate(value):
            check_type("%s[%d]" % (where, i), v, t[0])
    elif isinstance(t, str):
        fields = SCHEMA[t]
        if not isinstance(value, dict):
            return bad(where, "expected an object (%s)" % t)
        if fields is None:
            for k, v in value.items():
                if not isinstance(k, str) or not isinstance(v, str):
                    bad("%s.%s" % (where, k), "expected string: string (quote numbers)")
            return
        for k, v in value.items():
            if k not in fields:
                bad("%s.%s" % (where, k), "no such field in %s" % t)
            else:
                check_type("%s.%s" % (where, k), v, fields[k])
    elif t is I and isinstance(value, bool) or not isinstance(value, t):
        bad(where, "expected %s, got %r" % (getattr(t, "__name__", t), value))


def serve_options(memtrace):
    out = subprocess.run([memtrace, "serve", "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"--[a-z][a-z-]*", out))


def doc_caps(root):
    text = open(os.path.join(root, "docs", "serve.md")).read()
    rows = re.findall(r"^\| (`CAP_[^|]*)\|", text, re.M)
    return {c for r in rows for c in re.findall(r"`CAP_([A-Z_]+)`", r)}


def check_memtrace(where, pod, c, opts, caps, annotations):
    sc = c.get("securityContext", {})
    if sc.get("privileged"):
        bad(where, "privileged")
    capa = sc.get("capabilities", {})
    if capa.get("drop") != ["ALL"]:
        bad(where, "capabilities.drop is not [ALL]")
    if set(capa.get("add", [])) != caps:
        bad(where, "capabilities.add %s != docs/serve.md's %s"
            % (sorted(capa.get("add", [])), sorted(caps)))
    if not c.get("resources", {}).get("requests"):
        bad(where, "no resource requests")
    args = c.get("args", [])
    if args[:1] != ["serve"]:
        bad(where, "args do not run `memtrace serve`")
    for a in args:
        if a.startswith("--") and a.split("=")[0] not in opts:
            bad(where, "%s is not an option of memtrace serve" % a)
    listen = args[args.index("--listen") + 1] if "--listen" in args else "127.0.0.1:9464"
    port = int(listen.rsplit(":", 1)[1])
    if not listen.startswith("127.") and "--allow-remote" not in args:
        bad(where, "--listen %s without --allow-remote" % listen)
    if port not in [p.get("containerPort") for p in c.get("ports", [])]:
        bad(where, "--listen port %d is not a containerPort" % port)
    if annotations.get("prometheus.io/port") != str(port):
        bad(where, "prometheus.io/port %r != the listen port %d"
            % (annotations.get("prometheus.io/port"), port))
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        v = vols.get(m["name"])
        if v is None:
            bad(where, "volumeMount %s names no volume" % m["name"])
        elif ("secret" in v or "hostPath" in v) and not m.get("readOnly"):
            bad(where, "volumeMount %s (secret or hostPath) is not readOnly" % m["name"])
    if "--token-file" in args:
        tf = args[args.index("--token-file") + 1]
        if not any(tf.startswith(m["mountPath"].rstrip("/") + "/") for m in c.get("volumeMounts", [])):
            bad(where, "--token-file %s is on no mounted volume" % tf)


def main():
    memtrace = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = sys.argv[2:] or sorted(glob.glob(os.path.join(root, "deploy", "*.yaml")))
    opts, caps = serve_options(memtrace), doc_caps(root)
    if not opts or not caps:
        print("check-deploy: cannot read memtrace serve --help or docs/serve.md's table")
        return 1
    for f in files:
        docs = [d for d in yaml.safe_load_all(open(f)) if d]
        ds_labels = {}
        for n, d in enumerate(docs):
            kind = d.get("kind")
            where = "%s[%d] %s/%s" % (os.path.basename(f), n, kind, d.get("metadata", {}).get("name"))
            if (d.get("apiVersion"), kind) not in KINDS:
                bad(where, "unknown apiVersion/kind %s/%s" % (d.get("apiVersion"), kind))
                continue
            check_type(where, d, kind)
            if not DNS1123.match(d.get("metadata", {}).get("name", "")):
                bad(where, "metadata.name is not DNS-1123")
            spec = d.get("spec", {})
            if kind in ("DaemonSet", "Deployment"):
                tmpl = spec.get("template", {})
                labels = tmpl.get("metadata", {}).get("labels", {})
                sel = spec.get("selector", {}).get("matchLabels", {})
                if not sel or any(labels.get(k) != v for k, v in sel.items()):
                    bad(where, "selector does not match the template's labels")
                pod = tmpl.get("spec", {})
                if kind == "DaemonSet":
                    ds_labels = labels
                    if not pod.get("hostPID"):
                        bad(where, "a per-node memtrace needs hostPID: true")
                mt = [c for c in pod.get("containers", []) if "memtrace" in c.get("image", "")]
                if not mt:
                    bad(where, "no memtrace container")
                if kind == "Deployment" and len(pod.get("containers", [])) > 1 \
                        and not pod.get("shareProcessNamespace"):
                    bad(where, "a sidecar needs shareProcessNamespace: true")
                ann = tmpl.get("metadata", {}).get("annotations", {})
                for c in mt:
                    check_memtrace("%s container %s" % (where, c.get("name")), pod, c, opts, caps, ann)
            if kind == "Service":
                sel = spec.get("selector", {})
                if not sel or any(ds_labels.get(k) != v for k, v in sel.items()):
                    bad(where, "selector matches no pod of the DaemonSet before it")
                if spec.get("ports", [{}])[0].get("targetPort") != "metrics":
                    bad(where, "targetPort is not the container's port 'metrics'")
    for p in problems:
        print("check-deploy: " + p)
    print("check-deploy: %d file(s), %d problem(s)" % (len(files), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
