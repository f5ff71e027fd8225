package policy_test

// knownEscapes are the corpus cases that do not hold today, by case id (the command, then
// " @cwd" and " [tool]" when the case sets them), each with what it got when listed. TestRedteam
// logs them instead of failing, and fails when one starts to hold: move it out of this table
// when you fix it.
var knownEscapes = map[string]string{
	"for ((i=0; i<3; i++)); do echo $i; done":                     "asked on purpose: issue 12 item 6 says loops other than fork bombs ask (a loop may not end); got defaults ask/policy exec.analysis",
	"while IFS= read -r line; do echo \"$line\"; done < data.txt": "asked on purpose: issue 12 item 6 says loops other than fork bombs ask (a loop may not end); got defaults ask/policy exec.analysis",
	"i=0; while [ $i -lt 3 ]; do i=$((i+1)); done":                "asked on purpose: issue 12 item 6 says loops other than fork bombs ask (a loop may not end); got defaults ask/policy exec.analysis",
}
