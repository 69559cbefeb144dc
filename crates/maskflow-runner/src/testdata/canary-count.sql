SELECT count(*) FROM llm_calls
