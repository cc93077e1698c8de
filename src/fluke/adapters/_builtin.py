"""fluke's own readers: name and module, in detection order (the one list of them; importing
it loads no reader). A third party's readers come after these (:mod:`fluke.adapters._plugins`)."""

BUILTIN: tuple[tuple[str, str], ...] = (
    ("fluke", "_fluke_jsonl"),
    ("tau2-bench", "_tau2bench"),
    ("tau-bench", "_taubench"),
    ("langgraph", "_langgraph"),
    ("openai", "_openai"),
    ("n8n", "_n8n"),
    ("inspect", "_inspect"),
    ("openinference", "_openinference"),
    ("otel-genai", "_otel_genai"),
    ("openai-agents", "_agents_sdk"),
    ("openai-agents-items", "_agents_items"),
    ("terminal-bench", "_terminal_bench"),
    ("crewai", "_crewai"),
    ("lm-eval", "_lm_eval"),
    ("deepeval", "_deepeval"),
)
