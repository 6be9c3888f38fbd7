# Source: https://github.com/axel971/sCT_generation/blob/099b850bc874739211d36627a23902d6d8a6f531/sources/models/testing_function.py
# Report: audit of an MRI-to-synthetic-CT U-Net: test() runs under inference_mode but appends every batch's predicted slices to a list on the model's device and concatenates them there, so a whole patient volume (and the list) sits on the GPU before it is moved off
# Shape: same helper, but each batch's prediction is copied to the host before it is kept, so the list and the final torch.cat live in CPU memory and the GPU only holds one batch
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

DEVICE = torch.device("cuda")
BATCH_SIZE = 16


def mae(pred, target):
    return float(np.mean(np.abs(pred - target)))


def predict_volume(model, loader, device=DEVICE):
    slices = []
    model.eval()
    with torch.inference_mode():
        for (mri,) in loader:
            mri = mri.to(device, non_blocking=True)
            slices.append(model(mri).cpu())
    return torch.cat(slices, dim=0)


def evaluate_patients(model, test_mris, test_cts, patient_ids, save_fn):
    model.to(DEVICE)
    scores = {}
    for pid, mri_volume, ct_volume in zip(patient_ids, test_mris, test_cts):
        dataset = TensorDataset(torch.from_numpy(mri_volume).unsqueeze(1))
        loader = DataLoader(dataset, batch_size=BATCH_SIZE, pin_memory=True)
        volume = predict_volume(model, loader)
        sct = volume.squeeze(1).float().numpy()
        scores[pid] = mae(sct, ct_volume)
        save_fn(sct, pid)
    print(f"mean MAE over {len(scores)} patients: {np.mean(list(scores.values())):.2f} HU")
    return scores


if __name__ == "__main__":
    from models.UNet_2d import UNet_2d

    net = UNet_2d(1, 1)
    net.load_state_dict(torch.load("unet_2d.pt", map_location="cpu"))
    mris = [np.random.rand(96, 256, 256).astype("float32") for _ in range(3)]
    cts = [np.random.rand(96, 256, 256).astype("float32") for _ in range(3)]
    evaluate_patients(net, mris, cts, ["p0", "p1", "p2"], lambda arr, pid: None)
