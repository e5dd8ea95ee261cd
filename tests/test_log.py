"""The library logs; its default handler writes the messages as they are to the current stderr."""

from __future__ import annotations

import logging

import nasenergy.log
from nasenergy.hardware.select import resolve_hardware


def test_library_messages_go_to_the_current_stderr_as_they_are(capsys) -> None:
    logging.getLogger("nasenergy.search.storage.journal").warning("warning: %s", "a torn tail was set aside")
    logging.getLogger("nasenergy.anything").info("a note")
    logging.getLogger("nasenergy.anything").debug("not shown")
    captured = capsys.readouterr()
    assert captured.err == "warning: a torn tail was set aside\na note\n" and captured.out == ""


def test_the_default_handler_can_be_turned_off_and_records_propagated(capsys, caplog) -> None:
    nasenergy.log.disable_default_handler()
    nasenergy.log.enable_propagation()
    try:
        with caplog.at_level(logging.INFO):
            logging.getLogger("nasenergy.x").info("to the application's handlers")
        assert capsys.readouterr().err == ""
        assert "to the application's handlers" in [r.getMessage() for r in caplog.records]
    finally:
        nasenergy.log.disable_propagation()
        nasenergy.log.enable_default_handler()
    logging.getLogger("nasenergy.x").info("back")
    assert capsys.readouterr().err == "back\n"


def test_announce_defaults_to_the_log(monkeypatch, capsys) -> None:
    monkeypatch.setattr("nasenergy.hardware.select.cuda_available", lambda: False)
    assert resolve_hardware("auto", space_name="tss") == "recorded"
    assert capsys.readouterr().err == "no CUDA GPU found: replaying the recorded H200 profile (source=recorded)\n"
