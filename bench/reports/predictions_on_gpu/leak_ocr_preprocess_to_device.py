# Source: https://github.com/microsoft/unilm/issues/621
# Report: a batch-inference script for a text-recognition model preprocesses a thousand line images, moving each one to the GPU as it is loaded and keeping them all in a list before generation, and GPU memory keeps climbing until it runs out
# Shape: preprocess_image() returns a CUDA tensor and preprocess_samples() appends every one to a list that lives for the whole run; batching happens only afterwards
# Expect: TML004 line 36
import glob
import os

import torch
from PIL import Image
from torchvision import transforms
from transformers import TrOCRProcessor, VisionEncoderDecoderModel

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

img_transform = transforms.Compose([
    transforms.Resize((384, 384), interpolation=transforms.InterpolationMode.BICUBIC),
    transforms.ToTensor(),
    transforms.Normalize(0.5, 0.5),
])


def load_model(name="microsoft/trocr-base-printed"):
    processor = TrOCRProcessor.from_pretrained(name)
    model = VisionEncoderDecoderModel.from_pretrained(name).to(DEVICE).eval()
    return processor, model


def preprocess_image(path):
    im = Image.open(path).convert("RGB")
    return img_transform(im).to(DEVICE).float()


def preprocess_samples(paths):
    images = []
    for path in paths:
        images.append(preprocess_image(path))  # expect: TML004
    return images


def recognize(paths, processor, model, batch_size=16, beams=5):
    images = preprocess_samples(paths)
    texts = []
    with torch.no_grad():
        for start in range(0, len(images), batch_size):
            pixel_values = torch.stack(images[start:start + batch_size])
            ids = model.generate(pixel_values=pixel_values, num_beams=beams, max_new_tokens=64)
            texts.extend(processor.batch_decode(ids, skip_special_tokens=True))
    return dict(zip(paths, texts))


if __name__ == "__main__":
    processor, model = load_model()
    line_images = sorted(glob.glob(os.path.join("lines", "*.png")))[:1000]
    results = recognize(line_images, processor, model)
    with open("predictions.tsv", "w") as fh:
        for path, text in results.items():
            fh.write(f"{os.path.basename(path)}\t{text}\n")
