CREATE TABLE llm_calls (id TEXT);
INSERT INTO llm_calls VALUES ('call-1');
