package policy

import (
	"slices"
	"testing"
)

func TestJqEnvReads(t *testing.T) {
	for _, c := range []struct {
		filter string
		whole  bool
		names  []string
	}{
		{"env", true, nil},
		{"$ENV", true, nil},
		{"env | keys", true, nil},
		{"{env}", true, nil},
		{"{a: env}", true, nil},
		{"[env[]]", true, nil},
		{"env.HOME", false, []string{"HOME"}},
		{"$ENV.GITHUB_TOKEN", false, []string{"GITHUB_TOKEN"}},
		{`env["AWS_SECRET_ACCESS_KEY"]`, false, []string{"AWS_SECRET_ACCESS_KEY"}},
		{`$ENV.["X"]`, false, []string{"X"}},
		{`"\(env.TOKEN)"`, false, []string{"TOKEN"}},
		{`"a \(env) b"`, true, nil},
		{`"\("x" + "\(env)")"`, true, nil},
		{`@sh "echo \(env.HOME)"`, false, []string{"HOME"}},
		{`env[$k]`, true, nil},
		{`(env)`, true, nil},
		// Not reads.
		{"{env: 1}", false, nil},
		{"{a: 1, env: 2}", false, nil},
		{`{"env": 1}`, false, nil},
		{".env", false, nil},
		{".a.env", false, nil},
		{`."env"`, false, nil},
		{`.["env"]`, false, nil},
		{`.a == "env"`, false, nil},
		{`"$ENV"`, false, nil},
		{"$environment", false, nil},
		{"$env", false, nil},
		{"environment", false, nil},
		{"# env\n.", false, nil},
		{".[] | .token_count", false, nil},
	} {
		t.Run(c.filter, func(t *testing.T) {
			whole, names := jqEnvReads(c.filter)
			if whole != c.whole || !slices.Equal(names, c.names) {
				t.Errorf("jqEnvReads(%q) = %v, %q; want %v, %q", c.filter, whole, names, c.whole, c.names)
			}
		})
	}
}
