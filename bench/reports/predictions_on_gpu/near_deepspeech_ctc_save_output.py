# Source: https://github.com/SeanNaren/deepspeech.pytorch/blob/00989e68afcf45343c38cabb1e10b5ea660e0d11/deepspeech_pytorch/testing.py
# Report: DeepSpeech2 (CTC) evaluation: run_evaluation() is @torch.no_grad(); when --save_output is set it keeps every batch's acoustic-model output for later LM tuning, and the repository appends `out.cpu()` so the T x N x vocab logits of the whole test set do not pile up on the GPU.
# Shape: the repository version: same @torch.no_grad() loop, the saved output is moved off the GPU with `out.cpu()` before it goes into output_data (the lengths and strings are already host values).
# Expect: near-miss: must be silent
import torch
from tqdm import tqdm

from deepspeech_pytorch.decoder import GreedyDecoder
from deepspeech_pytorch.loader.data_loader import AudioDataLoader, SpectrogramDataset
from deepspeech_pytorch.utils import load_decoder, load_model


@torch.no_grad()
def run_evaluation(test_loader,
                   device,
                   model,
                   decoder,
                   target_decoder,
                   save_output=None,
                   verbose=False,
                   use_half=False):
    model.eval()
    total_cer, total_wer, num_tokens, num_chars = 0, 0, 0, 0
    output_data = []
    for i, data in tqdm(enumerate(test_loader), total=len(test_loader)):
        inputs, targets, input_percentages, target_sizes = data
        input_sizes = input_percentages.mul_(int(inputs.size(3))).int()
        inputs = inputs.to(device)
        if use_half:
            inputs = inputs.half()
        split_targets = []
        offset = 0
        for size in target_sizes:
            split_targets.append(targets[offset:offset + size])
            offset += size

        out, output_sizes = model(inputs, input_sizes)

        decoded_output, _ = decoder.decode(out, output_sizes)
        target_strings = target_decoder.convert_to_strings(split_targets)

        if save_output is not None:
            # keep the network output for the LM parameter search
            output_data.append((out.cpu(), output_sizes, target_strings))
        for x in range(len(target_strings)):
            transcript, reference = decoded_output[x][0], target_strings[x][0]
            wer_inst = decoder.wer(transcript, reference)
            cer_inst = decoder.cer(transcript, reference)
            total_wer += wer_inst
            total_cer += cer_inst
            num_tokens += len(reference.split())
            num_chars += len(reference.replace(" ", ""))
            if verbose:
                print("Ref:", reference.lower())
                print("Hyp:", transcript.lower())
    wer = float(total_wer) / num_tokens
    cer = float(total_cer) / num_chars
    return wer * 100, cer * 100, output_data


def evaluate(cfg):
    device = torch.device("cuda" if cfg.model.cuda else "cpu")
    model = load_model(device=device, model_path=cfg.model.model_path,
                       use_half=cfg.model.use_half)
    decoder = load_decoder(labels=model.labels, cfg=cfg.lm)
    target_decoder = GreedyDecoder(model.labels, blank_index=model.labels.index("_"))
    test_dataset = SpectrogramDataset(audio_conf=model.audio_conf,
                                      manifest_filepath=cfg.test_manifest,
                                      labels=model.labels, normalize=True)
    test_loader = AudioDataLoader(test_dataset, batch_size=cfg.batch_size,
                                  num_workers=cfg.num_workers)
    wer, cer, output_data = run_evaluation(test_loader, device, model, decoder,
                                           target_decoder, save_output=cfg.save_output,
                                           verbose=cfg.verbose, use_half=cfg.model.use_half)
    print("Test Summary \tAverage WER {:.3f}\tAverage CER {:.3f}".format(wer, cer))
    if cfg.save_output:
        torch.save(output_data, cfg.save_output)
