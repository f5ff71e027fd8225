package client_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/approvebot/approvebot/client"
)

// An agent asks before it runs a shell command, and runs it only when allowed.
func ExampleClient_Ask() {
	c, err := client.New(os.Getenv(client.EnvURL), os.Getenv(client.EnvToken), client.Options{})
	if err != nil {
		fmt.Println("refused:", err) // no client, no allow
		return
	}
	res := c.Ask(context.Background(), client.Ask{
		Tool:    "bash",
		Args:    map[string]any{"command": "rm -rf ./build"},
		Session: "build-42",
		Cwd:     "/srv/app",
		Reason:  "clean before the release build",
	})
	if !res.Allowed() {
		// Denied, timed out or failed: res.Message says which, in words for the model.
		fmt.Println(res.Message)
		return
	}
	_ = exec.Command("rm", "-rf", "./build").Run()
}
