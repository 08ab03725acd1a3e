"""Baseline agents for rollouts: random, oracle replay and a prompt agent for any
OpenAI-compatible chat-completions endpoint."""

from sciagent_gym.agents.prompt import AgentError, PromptAgent, Usage, parse_reply

__all__ = ["AgentError", "PromptAgent", "Usage", "parse_reply"]
