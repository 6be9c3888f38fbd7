# Source: https://github.com/seoungwugoh/ivs-demo/issues/1
# Report: the interactive video segmentation demo ran out of CUDA memory because the `volatile` flag it relied on is deprecated since PyTorch 0.4; the suggested fix wraps the Prop_forward/Prop_backward calls in torch.no_grad().
# Shape: propagation runs the network frame by frame with autograd on and writes each estimate into the persistent self.all_E buffer (and the attention reference into self.next_a_ref); the next frame reads the previous estimate back, so the buffer on self ends up holding a graph chained across every propagated frame.
# Expect: TML005 lines 30, 37
import numpy as np
import torch


class InteractiveSegmenter:
    def __init__(self, model_I, model_P, frames, device="cuda"):
        self.model_I = model_I.to(device).eval()
        self.model_P = model_P.to(device).eval()
        self.num_frames, self.height, self.width = frames.shape[:3]
        all_F = torch.from_numpy(np.transpose(frames, (3, 0, 1, 2))).float() / 255.0
        self.all_F = all_F.unsqueeze(0).to(device)
        self.all_E = torch.zeros(1, self.num_frames, self.height, self.width, device=device)
        self.prev_E = torch.zeros_like(self.all_E)
        self.dummy_M = torch.zeros(1, self.height, self.width, dtype=torch.long, device=device)
        self.ref = None
        self.a_ref = None
        self.next_a_ref = None
        self.prev_targets = []

    def set_reference(self, ref, a_ref):
        self.ref, self.a_ref = ref, a_ref

    def prop_forward(self, target, end):
        for n in range(target + 1, end + 1):
            print(f"[propagation] {n - 1} -> {n}")
            self.all_E[:, n], _, self.next_a_ref = self.model_P(  # expect: TML005
                self.ref, self.a_ref, self.all_F[:, :, n], self.prev_E[:, n],
                torch.round(self.all_E[:, n - 1]), self.dummy_M, [1, 0, 0, 0, 0])

    def prop_backward(self, target, end):
        for n in reversed(range(end, target)):
            print(f"[propagation] {n + 1} -> {n}")
            self.all_E[:, n], _, self.next_a_ref = self.model_P(  # expect: TML005
                self.ref, self.a_ref, self.all_F[:, :, n], self.prev_E[:, n],
                torch.round(self.all_E[:, n + 1]), self.dummy_M, [1, 0, 0, 0, 0])

    def run_propagation(self, target, left_end, right_end):
        self.prop_forward(target, right_end)
        self.prop_backward(target, left_end)
        self.prev_targets.append(target)

    def get_mask_range(self, start, end):
        masks = torch.round(self.all_E[0, start:end]).detach().cpu().numpy()
        return masks.astype(np.uint8)
