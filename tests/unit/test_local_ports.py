"""make dev checks its ports before it starts anything: a port another program listens on is named
with the flag that moves it, instead of the web server's "Address already in use" after moto started."""

import socket

from local.__main__ import ports_busy_message
from local.stack import free_port, ports_in_use


def test_a_port_something_listens_on_is_named_by_its_flag_and_a_free_one_is_not() -> None:
    # Given a program listening on one port, and another port nobody uses
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        taken = listener.getsockname()[1]
        free = free_port()
        # When make dev checks its ports
        busy = ports_in_use("127.0.0.1", {"--moto-port": taken, "--port": free})
    # Then only the listened-on port is busy, under its flag
    assert busy == {"--moto-port": taken}


def test_a_port_whose_listener_stopped_is_free_again_at_once() -> None:
    # Given a stack stopped a moment ago: its port had a listener and a connection, now closed
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            served, _ = listener.accept()
            served.close()  # the server side closes first: its end waits in TIME_WAIT
            client.recv(1)
    # When make dev starts again, then the port is not reported (the servers bind with SO_REUSEADDR)
    assert ports_in_use("127.0.0.1", {"--port": port}) == {}


def test_the_message_names_each_busy_port_and_says_how_to_start_on_others() -> None:
    message = ports_busy_message({"--moto-port": 5001, "--sandbox-port": 8900})
    assert "5001 (--moto-port), 8900 (--sandbox-port)" in message
    assert "make dev already running" in message
    assert ".venv/bin/python -m local --moto-port <port> --sandbox-port <port>" in message
