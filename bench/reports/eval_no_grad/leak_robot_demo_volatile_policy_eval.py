# Source: https://github.com/trevor-richardson/collision_avoidant_reinforcement/blob/0e002292afe1121dc3fb68e1e6ed715f4827d4db/machine_learning/evaluate_model.py
# Report: audit of the robot evaluation runner (evaluate_model.py driving demo_vrep_simulation.collectImageData): after model.eval() the anticipation ConvLSTM and the policy run on Variable(..., volatile=True), which PyTorch >= 0.4 ignores, so autograd stays on; the ConvLSTM states are fed back every step and each step's log-prob is stored on the policy until main() clears it after the episode
# Shape: collect_episode(ca_model, pn_model, sim, states) loop: frame/state from the simulator, ca_model(vid, st, vid_states, st_states) rebinding its recurrent states, pn_model(torch.cat([...])) -> Categorical, pn_model.saved_log_probs.append(m.log_prob(act)); main() runs episodes and does del pn_model.saved_log_probs[:] after each
# Expect: TML005 line 34; TML003 line 34; TML003 line 39; TML001 line 42
import time

import numpy as np
import torch
from torch.autograd import Variable
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

        vid = Variable(to_device(np.transpose(frames[-1][None].astype("float"), (0, 3, 1, 2))), volatile=True)
        st = Variable(to_device(collector[-1]), volatile=True)
        output, vid_states, st_states = ca_model(vid, st, vid_states, st_states)  # expect: TML005, TML003

        flat = to_device(frames[-1].flatten())
        prev = to_device(frames[-2].flatten()) if len(frames) > 1 else flat
        inp = Variable(torch.cat([flat, prev, st.data, output.data.squeeze()]), volatile=True)
        out = pn_model(inp)  # expect: TML003
        m = Categorical(out)
        act = m.sample()
        pn_model.saved_log_probs.append(m.log_prob(act))  # expect: TML001
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
