"""Choice sets of the tests on demand."""

from wanmon.core.choices import text_choices

JobKind = text_choices(
    "JobKind",
    {
        "throughput": "Throughput (nuttcp)",
        "owamp": "One-way delay and loss (owamp)",
        "traceroute": "Route (traceroute)",
        "tracepath": "Route and path MTU (tracepath)",
    },
)

JobStatus = text_choices(
    "JobStatus",
    {
        "queued": "Queued: waiting for the agent to pick it up",
        "running": "Running: the agent picked it up",
        "done": "Done: the result is stored",
        "failed": "Failed",
        "refused": "Refused by the policy",
    },
)

JobProtocol = text_choices(
    "JobProtocol",
    {
        "tcp": "TCP",
        "udp": "UDP",
    },
)

JobVerdict = text_choices(
    "JobVerdict",
    {
        "confirmed": "Confirmed: the test shows what the finding says",
        "refuted": "Refuted: the test shows the other explanation",
        "inconclusive": "Inconclusive",
    },
)
