"""A scripted chat model for driving real LangGraph agents in tests (LangGraph is a test dependency).

Importing this module skips the calling test where LangGraph is not installed.
"""

import warnings

import pytest

pytest.importorskip("langgraph")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import ToolNode, create_react_agent  # noqa: E402,F401


class ScriptedModel(FakeMessagesListChatModel):
    """Replays scripted AI messages; binding tools is a no-op (the script already names them)."""

    def bind_tools(self, tools, **kwargs):
        return self
