# Source: https://github.com/trevor-richardson/collision_avoidant_reinforcement/blob/0e002292afe1121dc3fb68e1e6ed715f4827d4db/machine_learning/evaluate_model.py
# Report: fix of the robot evaluation runner (evaluate_model.py driving demo_vrep_simulation.collectImageData): the removed volatile=True flag is replaced by the torch.no_grad() block PyTorch's warning points to, so the fed-back ConvLSTM states and the policy output hold no graph, and only float log-probs are kept on the policy
# Shape: same collect_episode(ca_model, pn_model, sim, states) loop: ca_model(vid, st, vid_states, st_states) rebinding its recurrent states and pn_model(torch.cat([...])) -> Categorical inside `with torch.no_grad():`; pn_model.saved_log_probs gets m.log_prob(act).item(); main() clears the lists after each episode
# Expect: near-miss: must be silent
import time

import numpy as np
import torch
from torch.distributions import Categorical


def to_device(array):
    t = torch.from_numpy(np.asarray(array, dtype=np.float32))
    return t.cuda() if torch.cuda.is_available() else t


def collect_episode(ca_model, pn_model, sim, states, duration=2.8):
    ca_model.eval()
    pn_model.eval()
    vid_states, st_states = states
    frames, collector = [], []
    action = 0
    t_end = time.time() + duration
    while sim.connected() and time.time() < t_end:
        image = sim.read_frame()
        if image is None:
            continue
        frames.append(np.flipud(image))
        collector.append(sim.read_state() + [action])

        with torch.no_grad():
            vid = to_device(np.transpose(frames[-1][None].astype("float"), (0, 3, 1, 2)))
            st = to_device(collector[-1])
            output, vid_states, st_states = ca_model(vid, st, vid_states, st_states)

            flat = to_device(frames[-1].flatten())
            prev = to_device(frames[-2].flatten()) if len(frames) > 1 else flat
            out = pn_model(torch.cat([flat, prev, st, output.squeeze()]))
            m = Categorical(out)
            act = m.sample()
        pn_model.saved_log_probs.append(m.log_prob(act).item())
        action = (out.data.argmax().item() - 2) * 15
        sim.set_wheel_velocity(action)


def main(ca_model, pn_model, make_sim, init_states, iterations=30000):
    for index in range(iterations):
        sim = make_sim()
        collect_episode(ca_model, pn_model, sim, init_states(ca_model))
        sim.stop()
        del pn_model.saved_log_probs[:]
        del pn_model.rewards[:]
        del pn_model.reset_locations[:]
        print("episode {} done".format(index))
