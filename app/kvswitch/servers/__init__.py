"""Local model servers (llama-server, LM Studio, vLLM+LMCache, SGLang, Ollama): what KV Switch knows
about each, below the commands and the UI and beside logs, targets and platform."""
