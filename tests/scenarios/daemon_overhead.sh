#!/usr/bin/env bash
# Scenario: node overhead and DaemonSets on hypothetical nodes, end to end on
# examples/disrupt/daemonsets.yaml and examples/autoscale/daemonsets.yaml
# (docs/disrupt.md "Node overhead", "DaemonSets on new nodes";
# docs/autoscale.md "DaemonSets and node overhead on new nodes").
set -u
BERTH=${BERTH:-build/berth}
D=examples/disrupt/daemonsets.yaml
A=examples/autoscale/daemonsets.yaml
AT=2024-05-01T12:00:00Z
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=$("$BERTH" disrupt plan $D --at $AT); rc=$?
[ $rc -eq 0 ] || fail "disrupt: exit $rc"
# web-1's 1.2 cpu fit a D2s_v3 with node-agent (1700m left); cart-1's 1.8 do not
echo "$T" | grep -q "replace Underutilized web-1 -> Standard_D2s_v3 on-demand" ||
  fail "disrupt: web-1 not replaced by a D2s_v3: $T"
echo "$T" | grep -q "cart-1 .*no replacement is cheaper" || fail "disrupt: cart-1 not kept: $T"
echo "$T" | grep -q "replace Underutilized cart-1" && fail "disrupt: cart-1 replaced: $T"
# without the DaemonSets (the file cut before them) cart-1 goes first
T=$(sed '/^- apiVersion: apps\/v1/,$d' $D | "$BERTH" disrupt plan - --at $AT 2>&1)
echo "$T" | grep -q "replace Underutilized cart-1 -> Standard_D2s_v3" ||
  fail "disrupt without DaemonSets: cart-1 not replaced: $T"
T=$("$BERTH" autoscale plan $A --at $AT); rc=$?
[ $rc -eq 1 ] || fail "autoscale: exit $rc (the node-agent pod for full-1 stays unschedulable)"
echo "$T" | grep -Eq "general +m5.xlarge +spot +us-east-1a +x3 +[0-9.]+ +8$" ||
  fail "autoscale: not 3 m5.xlarge for the 8 web pods: $T"
echo "$T" | grep -q "node-agent-.*DaemonSet pod for node full-1 does not fit its node" ||
  fail "autoscale: the pending DaemonSet pod not reported: $T"
T=$("$BERTH" autoscale plan $A --at $AT --policy cluster-autoscaler --expander least-waste)
echo "$T" | grep -Eq "general +m5.xlarge +spot +us-east-1a +x3 " ||
  fail "autoscale cluster-autoscaler: not 3 nodes: $T"
# an unknown InstanceType field is an error with its location
T=$(sed 's/  enis: 4/  eni: 4/' $A | "$BERTH" autoscale plan - --at $AT 2>&1); rc=$?
[ $rc -eq 2 ] || fail "bad field: exit $rc"
echo "$T" | grep -q "spec.eni: unknown field" || fail "bad field: message: $T"
[ $fails -eq 0 ] && echo "daemon_overhead: ok"
exit $fails
