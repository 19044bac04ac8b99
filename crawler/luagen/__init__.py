"""Policy rules written once in Python and run as Lua inside Redis scripts
(:mod:`~crawler.luagen.lua_translator`)."""

from crawler.luagen.lua_translator import LuaTranslationError, LuaTranslator, lua_function

__all__ = ["LuaTranslationError", "LuaTranslator", "lua_function"]
