# Source: https://github.com/NVIDIA-NeMo/Speech/issues/35
# Report: jasper_infer.py grew GPU memory after every batch until OOM; the maintainer pointed at `values_dict[key] += [registered_e_tensors[key]]` in the inference action and moving each tensor to .cpu() fixed it.
# Shape: an inference action collects the requested output tensors of every batch into per-key lists with `+= [tensor]`; the tensors stay on the GPU until the whole dataset has been processed.
# Expect: TML004 line 39
import torch


class PtActions:
    def __init__(self, modules, device="cuda"):
        self.modules = modules
        self.device = torch.device(device)

    def _run_graph(self, audio, audio_len):
        pre, enc, dec, greedy = (self.modules[k] for k in
                                 ("preprocessor", "encoder", "decoder", "greedy"))
        processed, processed_len = pre(input_signal=audio, length=audio_len)
        encoded, encoded_len = enc(audio_signal=processed, length=processed_len)
        log_probs = dec(encoder_output=encoded)
        predictions = greedy(log_probs=log_probs)
        return {
            "processed_signal": processed,
            "encoded": encoded,
            "encoded_len": encoded_len,
            "log_probs": log_probs,
            "predictions": predictions,
        }

    def infer(self, tensors, data_layer):
        for m in self.modules.values():
            m.eval()
        values_dict = {key: [] for key in tensors}
        with torch.no_grad():
            for batch in data_layer:
                audio, audio_len, transcript, transcript_len = (
                    t.to(self.device) for t in batch)
                registered_e_tensors = self._run_graph(audio, audio_len)
                registered_e_tensors["transcripts"] = transcript
                for key in tensors:
                    values_dict[key] += [registered_e_tensors[key]]  # expect: TML004
        return [values_dict[key] for key in tensors]


def infer_and_report(actions, data_layer, vocab):
    preds, refs = actions.infer(["predictions", "transcripts"], data_layer)
    hyps = [vocab.decode(p) for batch in preds for p in batch.tolist()]
    gts = [vocab.decode(r) for batch in refs for r in batch.tolist()]
    return hyps, gts
