package main

import (
	"os"
	"os/exec"
)

// runBinary runs the built binary with the test tokens in its environment.
func runBinary(bin, dir string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TEST_AGENT_TOKEN=test-agent-token-0123456789abcdef",
		"TEST_AGENT2_TOKEN=test-agent2-token-0123456789abcdef", "TEST_OPERATOR_TOKEN=test-operator-token-0123456789abcdef")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
