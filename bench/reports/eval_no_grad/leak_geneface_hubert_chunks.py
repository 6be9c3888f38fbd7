# Source: https://github.com/yerfor/GeneFace/issues/45
# Report: HuBERT feature extraction for a long video ran out of memory; the maintainer said the early code forgot no_grad so each chunk's graph piled up (it ran on CPU then); rewrite = the later CUDA version of process_audio_hubert.py with its @torch.no_grad() removed
# Shape: get_hubert_from_16k_speech runs HuBERT per 1000-frame clip without no_grad and appends each clip's last_hidden_state[0] to res_lst, torch.cat'd after the loop
# Expect: TML001 line 51

import glob
import os

import numpy as np
import soundfile as sf
import torch
import tqdm
from transformers import HubertModel, Wav2Vec2Processor

print("Loading the Wav2Vec2 Processor...")
wav2vec2_processor = Wav2Vec2Processor.from_pretrained("facebook/hubert-large-ls960-ft")
print("Loading the HuBERT Model...")
hubert_model = HubertModel.from_pretrained("facebook/hubert-large-ls960-ft")


def get_hubert_from_16k_wav(wav_16k_name):
    speech_16k, _ = sf.read(wav_16k_name)
    return get_hubert_from_16k_speech(speech_16k)


def get_hubert_from_16k_speech(speech, device="cuda:0"):
    global hubert_model
    hubert_model = hubert_model.to(device)
    if speech.ndim == 2:
        speech = speech[:, 0]  # [T, 2] -> [T]
    input_values_all = wav2vec2_processor(
        speech, return_tensors="pt", sampling_rate=16000).input_values  # [1, T]
    input_values_all = input_values_all.to(device)
    # the CNN front end acts like one Conv1D with kernel 400 and stride 320,
    # so clips of (kernel + stride * (N - 1)) samples give N frames without overlap
    kernel = 400
    stride = 320
    clip_length = stride * 1000
    num_iter = input_values_all.shape[1] // clip_length
    expected_T = (input_values_all.shape[1] - (kernel - stride)) // stride
    res_lst = []
    for i in range(num_iter):
        if i == 0:
            start_idx = 0
            end_idx = clip_length - stride + kernel
        else:
            start_idx = clip_length * i
            end_idx = start_idx + (clip_length - stride + kernel)
        input_values = input_values_all[:, start_idx:end_idx]
        hidden_states = hubert_model.forward(input_values).last_hidden_state  # [1, T', 1024]
        res_lst.append(hidden_states[0])  # expect: TML001
    if num_iter > 0:
        input_values = input_values_all[:, clip_length * num_iter:]
    else:
        input_values = input_values_all
    if input_values.shape[1] >= kernel:  # skip a tail shorter than the kernel
        hidden_states = hubert_model(input_values).last_hidden_state
        res_lst.append(hidden_states[0])
    ret = torch.cat(res_lst, dim=0).cpu()  # [T, 1024]
    assert abs(ret.shape[0] - expected_T) <= 1
    if ret.shape[0] < expected_T:
        ret = torch.nn.functional.pad(ret, (0, 0, 0, expected_T - ret.shape[0]))
    else:
        ret = ret[:expected_T]
    return ret


if __name__ == '__main__':
    lrs3_dir = '/home/user/datasets/raw/lrs3_raw/'
    wav_16k_names = glob.glob(os.path.join(lrs3_dir, '*/*.wav'))
    for wav_16k_name in tqdm.tqdm(wav_16k_names, total=len(wav_16k_names)):
        spk_id = wav_16k_name.split("/")[-2]
        clip_id = wav_16k_name.split("/")[-1][:-4]
        out_name = os.path.join(lrs3_dir, spk_id, clip_id + '_hubert.npy')
        if os.path.exists(out_name):
            continue
        hubert_hidden = get_hubert_from_16k_wav(wav_16k_name)
        np.save(out_name, hubert_hidden.detach().numpy())
