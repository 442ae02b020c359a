# As slow_alone.cmake, for the tests that exist only where cpp-httplib is (the scripted model's server): the
# agent's end-to-end run compiles candidates on every core.
set_tests_properties("agent_scripted:kj agent --adapter openai runs the scripted model on L1 1-3 end to end"
                     PROPERTIES PROCESSORS 2)
set_tests_properties(
  "agent_scripted:kj agent --adapter anthropic, gemini and openai (Responses) complete L1 1-3 as documented"
  PROPERTIES PROCESSORS 2)
