"""``python -m servecap.sim``: the simulator's CLI without the rest of servecap."""

from servecap.sim.cli import sim_app

if __name__ == "__main__":
    sim_app(prog_name="python -m servecap.sim")
