# Source: https://github.com/QwenLM/Qwen3-TTS/issues/5
# Report: the fine-tuning data preparation script grows VRAM steadily on a 15 h / 4k-utterance corpus; the fix stores code.cpu().tolist() and clears the batch lists after each encode
# Shape: each batch of audio is encoded by the speech tokenizer (inference mode); every returned GPU code tensor is written into the line dict, and the dict is kept in final_lines for the whole corpus
# Expect: TML004 line 58
import argparse
import json

import torch
import torch.nn as nn

BATCH_INFER_NUM = 32


class EncodeOutput:
    def __init__(self, audio_codes):
        self.audio_codes = audio_codes


class SpeechTokenizer(nn.Module):
    def __init__(self, n_codebooks=16, hop=1920):
        super().__init__()
        self.hop = hop
        self.proj = nn.Conv1d(1, n_codebooks, kernel_size=hop, stride=hop)

    def load_audio(self, path):
        return torch.randn(24000 * 4)

    @torch.inference_mode()
    def encode(self, audios):
        device = next(self.parameters()).device
        wavs = torch.stack([self.load_audio(audio) for audio in audios]).to(device)
        logits = self.proj(wavs.unsqueeze(1))
        codes = logits.argmax(dim=1)
        return EncodeOutput(list(codes.unbind(0)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=str, default="cuda:0")
    parser.add_argument("--input_jsonl", type=str, required=True)
    parser.add_argument("--output_jsonl", type=str, required=True)
    args = parser.parse_args()

    tokenizer = SpeechTokenizer().to(args.device)

    total_lines = [json.loads(line.strip()) for line in open(args.input_jsonl).readlines()]

    final_lines = []
    batch_lines = []
    batch_audios = []
    for line in total_lines:
        batch_lines.append(line)
        batch_audios.append(line["audio"])

        if len(batch_lines) >= BATCH_INFER_NUM:
            enc_res = tokenizer.encode(batch_audios)
            for code, item in zip(enc_res.audio_codes, batch_lines):
                item["audio_codes"] = code  # expect: TML004
                final_lines.append(item)

    if len(batch_audios) > 0:
        enc_res = tokenizer.encode(batch_audios)
        for code, item in zip(enc_res.audio_codes, batch_lines):
            item["audio_codes"] = code.cpu().tolist()
            final_lines.append(item)

    with open(args.output_jsonl, "w") as f:
        for item in final_lines:
            if torch.is_tensor(item["audio_codes"]):
                item["audio_codes"] = item["audio_codes"].cpu().tolist()
            f.write(json.dumps(item, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
