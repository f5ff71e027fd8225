package gate

import (
	"fmt"
	"strings"
	"time"
)

// The model-facing messages. A refusal is terminal and says so.
const doNotRetry = "Do not retry it, rewrite it, or achieve the same result another way."

func msgAllowedPolicy(rule string) string {
	return "Allowed by policy (" + rule + ")."
}

func msgAllowedGrant() string {
	return "Allowed: a human allowed this exact call for this session."
}

func msgAllowedHuman(by, outcome string) string {
	return fmt.Sprintf("Allowed by %s (%s).", by, outcome)
}

func msgAllowedFallback() string {
	return "Allowed: no approval channel could deliver the card and ask_fallback = \"allowlist\" covers this command."
}

func msgDeniedHuman(by, reason string) string {
	var b strings.Builder
	b.WriteString("Denied by ")
	b.WriteString(by)
	b.WriteString(".")
	if reason != "" {
		b.WriteString(` The user said: "`)
		b.WriteString(reason)
		b.WriteString(`".`)
	}
	b.WriteString(" This denial is final. ")
	b.WriteString(doNotRetry)
	return b.String()
}

func msgDeniedPolicy(source, rule, reason string) string {
	var b strings.Builder
	switch source {
	case "floor":
		b.WriteString("Refused by the hardline floor")
	case "rule":
		b.WriteString("Refused by a policy rule")
	default:
		b.WriteString("Refused by policy")
	}
	if rule != "" {
		b.WriteString(" (" + rule + ")")
	}
	b.WriteString(".")
	if reason != "" {
		b.WriteString(" " + reason)
		if !strings.HasSuffix(reason, ".") {
			b.WriteString(".")
		}
	}
	if source == "floor" {
		b.WriteString(" No one can approve this.")
	}
	b.WriteString(" " + doNotRetry)
	return b.String()
}

func msgLedger() string {
	return "Refused: a human already denied this exact call in this session. " + doNotRetry
}

func msgPaused(session string) string {
	return fmt.Sprintf("Refused: session %q is paused after repeated denials; every call is refused until an operator unpauses it. %s", session, doNotRetry)
}

func msgUnattended() string {
	return "Refused at once: this run is unattended, so no human is attached to approve this call. Do not wait for approval and do not retry it; continue without it or report that it needs a human."
}

func msgFallback() string {
	return "Refused: no approval channel could deliver the request to a human (ask_fallback = \"deny\"). Do not retry it, rewrite it, or achieve the same result another way."
}

func msgTimeout(d time.Duration) string {
	return fmt.Sprintf("Refused: no human answered within %s. Treat this as a refusal.", d)
}

func msgCancelled(by string) string {
	return "Cancelled by " + by + "; the request can no longer be approved."
}
