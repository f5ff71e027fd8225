package main

// commands is the table of subcommands; each lives in its own file.
func commands() map[string]command {
	return map[string]command{
		"serve":          {"run the approval service", cmdServe},
		"check":          {"evaluate the policy offline for one call (no server)", cmdCheck},
		"example-config": {"print the example configuration (every option, commented)", cmdExampleConfig},
	}
}
